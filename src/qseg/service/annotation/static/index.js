// The start page: who annotates, in which mode; the project's size.
"use strict";

const input = document.getElementById("annotator");
input.value = qseg.annotator() || "";

// the form is handled from the start: a click before the project's figures arrive must not
// submit it the browser's way
document.getElementById("start").addEventListener("submit", async (event) => {
  event.preventDefault();
  const name = input.value.trim();
  const mode = document.querySelector("input[name=mode]:checked").value;
  try {
    await qseg.api("/api/annotators", { method: "POST", body: { name } });
    localStorage.setItem("qseg.annotator", name);
    location.assign(`/${mode}?annotator=${encodeURIComponent(name)}`);
  } catch (error) {
    qseg.say(error.message, "error");
  }
});

qseg.api("/api/project").then((project) => {
  document.getElementById("project").textContent = project.name;
  document.getElementById("counts").textContent =
    `${qseg.count(project.queries, "query", "queries")}, ` +
    `${qseg.count(project.annotators.length, "annotator")} so far` +
    (project.settings.prefill ? `; the flat page starts from ${project.settings.prefill}` : "") +
    (project.settings.expert === "1" ? "; nested nodes may have more than two parts" : "");
}).catch((error) => qseg.say(error.message, "error"));
