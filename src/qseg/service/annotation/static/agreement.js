// The agreement page: fetches the summary of the chosen mode every few seconds and redraws
// it when an answer has been saved since.
"use strict";

const POLL_MS = 3000;
let shown = null;

function table(caption, header, rows, numeric = []) {
  const made = qseg.element("table");
  made.append(qseg.element("caption", {}, caption));
  const head = qseg.element("tr");
  header.forEach((cell) => head.append(qseg.element("th", { scope: "col" }, cell)));
  made.append(head);
  for (const row of rows) {
    const line = qseg.element("tr");
    row.forEach((cell, i) => {
      const number = numeric.includes(i) || /^-?[0-9.]+%?$/.test(String(cell));
      line.append(qseg.element("td", number ? { class: "number" } : {}, String(cell)));
    });
    made.append(line);
  }
  return made;
}

const fixed = (value, digits = 3) =>
  value === null || value === undefined ? "-" : Number(value).toFixed(digits);
const interval = (value, low, high) =>
  value === null || value === undefined ? "-" : `${fixed(value)} [${fixed(low)}, ${fixed(high)}]`;

function render(summary) {
  const pct = `${Math.round(summary.confidence * 100)}%`;
  document.getElementById("counts").textContent =
    `${qseg.count(summary.answers, "answer")} to ${summary.answered} of ` +
    `${qseg.count(summary.queries, "query", "queries")}; ${summary.shared} answered by two or ` +
    `more annotators. Updated ${new Date().toLocaleTimeString()}.`;
  document.getElementById("replicates").textContent =
    `${qseg.count(summary.replicates, "replicate")}, seed ${summary.seed}`;
  const agreement = document.getElementById("agreement");
  agreement.replaceChildren();
  if (summary.error) {
    agreement.append(qseg.element("p", {}, `Not yet defined: ${summary.error}.`));
  } else {
    const rows = summary.agreement.map((r) => [
      summary.mode === "flat" ? "d" : r.distance, r.items, r.annotations,
      interval(r.alpha, r.alpha_low, r.alpha_high),
      r.s === null ? "-" : interval(r.s, r.s_low, r.s_high),
    ]);
    agreement.append(table("Agreement", ["distance", "queries", "answers",
      `alpha [${pct} CI]`, `S [${pct} CI]`], rows));
  }
  const flat = summary.mode === "flat";
  const people = document.getElementById("annotators");
  people.replaceChildren();
  if (summary.annotators.length) {
    const header = flat
      ? ["annotator", "answers", "share of gaps broken", "mean segments",
        "mean segments, random model", "sd of segment lengths", "sd, random model",
        "both sides of a preposition", "neither side"]
      : ["annotator", "answers", "mean root height", "random binary tree"];
    const rows = summary.annotators.map((a) => flat
      ? [a.annotator, a.answers, fixed(a.break_share), fixed(a.mean_segments, 2),
        fixed(a.random_segments, 2), fixed(a.mean_sd), fixed(a.random_sd),
        fixed(a.preposition_both), fixed(a.preposition_none)]
      : [a.annotator, a.answers, fixed(a.mean_height, 2), fixed(a.random_height, 2)]);
    people.append(table("Per annotator", header, rows));
    if (rows.some((row) => row.includes("-"))) {
      people.append(qseg.element("p", { class: "keys" },
        "-: not defined yet (the sd of segment lengths needs an answer of two or more " +
        "segments; the preposition shares a query with a preposition inside it)."));
    }
  }
  const lowest = document.getElementById("lowest");
  lowest.replaceChildren();
  if (!summary.lowest.length) lowest.append(qseg.element("p", {}, "None yet."));
  else {
    const rows = summary.lowest.map((q) => [q.qid, q.text, fixed(q.agreement),
      q.answers.map((a) => `${a.annotator}: ${a.value}`).join("; ")]);
    const made = table("Least agreed first", ["query id", "query", "agreement", "answers"], rows);
    made.querySelectorAll("tr").forEach((line, i) => {
      if (i === 0) return;
      const q = summary.lowest[i - 1];
      const cell = line.children[1];
      const link = qseg.element("a", {
        href: `/${summary.mode}?index=${q.index}`,
        "aria-label": `review query ${q.qid}: ${q.text}`,
      }, q.text);
      cell.replaceChildren(link);
    });
    lowest.append(made);
  }
  const bias = document.getElementById("bias");
  bias.replaceChildren();
  if (!summary.bias.length) bias.append(qseg.element("p", {}, "None yet."));
  for (const t of summary.bias) bias.append(table(t.title, t.header, t.rows));
}

function mode() {
  return document.querySelector("input[name=mode]:checked").value;
}

async function refresh() {
  try {
    const summary = await qseg.api(`/api/agreement?mode=${mode()}`);
    const key = `${summary.mode}:${summary.version}`;
    if (key !== shown) {
      shown = key;
      render(summary);
    }
    qseg.say("");
  } catch (error) {
    qseg.say(error.message, "error");
  }
}

const asked = qseg.param("mode");
if (asked === "nested") document.getElementById("mode-nested").checked = true;
document.querySelectorAll("input[name=mode]").forEach((radio) =>
  radio.addEventListener("change", () => {
    history.replaceState(null, "", `/agreement?mode=${mode()}`);
    refresh();
  }));
// ask again only once the last answer is in: a slow summary never piles requests up
async function poll() {
  await refresh();
  setTimeout(poll, POLL_MS);
}
poll();
