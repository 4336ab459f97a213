// Flat mode: the words of a query with a toggle button in every gap; a pressed gap is a
// break. One gap at a time is in the tab order; the arrow keys move between gaps.
"use strict";

const flat = {
  words: [],
  breaks: [],
  focused: 0,

  show(item) {
    this.words = item.words;
    const given = item.answer || item.prefill || item.suggestion;
    this.breaks = given ? breaksOf(given, this.words.length) : Array(this.words.length - 1).fill(false);
    this.focused = 0;
    // an answer saved from the model's suggestion is marked as such in the exports
    item.suggested = !item.answer && !item.prefill && Boolean(item.suggestion);
    document.getElementById("source").textContent = item.answer
      ? "Your saved answer; change it and save again."
      : item.prefill ? "Pre-filled by the model: correct it where it is wrong."
      : item.suggested ? "The model's suggestion: confirm it, or change it where it is wrong."
      : "New query.";
    this.draw();
    const first = document.querySelector(".gap");
    (first || document.getElementById("save")).focus();
  },

  draw() {
    const box = document.getElementById("query");
    box.replaceChildren();
    this.words.forEach((word, i) => {
      box.append(qseg.element("span", { class: "word" }, word));
      if (i + 1 < this.words.length) {
        const gap = qseg.element("button", {
          type: "button",
          class: "gap",
          "data-gap": String(i),
          "aria-pressed": String(this.breaks[i]),
          "aria-label": `break between ${word} and ${this.words[i + 1]}`,
          tabindex: i === this.focused ? "0" : "-1",
        }, this.breaks[i] ? "|" : "·");
        gap.addEventListener("click", () => this.toggle(i));
        box.append(gap);
      }
    });
    document.getElementById("segments").textContent = this.text(" | ");
  },

  toggle(i) {
    this.breaks[i] = !this.breaks[i];
    this.focused = i;
    this.draw();
    document.querySelector(`.gap[data-gap="${i}"]`).focus();
  },

  move(step) {
    const gaps = this.words.length - 1;
    if (gaps < 1) return;
    this.focused = Math.min(gaps - 1, Math.max(0, this.focused + step));
    this.draw();
    document.querySelector(`.gap[data-gap="${this.focused}"]`).focus();
  },

  text(separator) {
    const parts = [[]];
    this.words.forEach((word, i) => {
      parts[parts.length - 1].push(word);
      if (i + 1 < this.words.length && this.breaks[i]) parts.push([]);
    });
    return parts.map((part) => part.join(" ")).join(separator);
  },

  answer() {
    return { value: this.text("|") };
  },
};

function breaksOf(pipe, count) {
  const breaks = [];
  pipe.split("|").forEach((segment) => {
    const size = segment.trim().split(/\s+/).length;
    for (let i = 1; i < size; i++) breaks.push(false);
    breaks.push(true);
  });
  breaks.pop();
  return breaks.length === count - 1 ? breaks : Array(count - 1).fill(false);
}

const annotating = new qseg.Annotating("flat", flat);

document.getElementById("query").addEventListener("keydown", (event) => {
  if (!qseg.plainKey(event) && !event.key.startsWith("Arrow")) return;
  if (event.key === "ArrowRight") flat.move(1);
  else if (event.key === "ArrowLeft") flat.move(-1);
  else if (event.key === "Home") flat.move(-flat.words.length);
  else if (event.key === "End") flat.move(flat.words.length);
  else if (event.key === " ") flat.toggle(flat.focused);
  else if (event.key === "Enter") annotating.save();
  else return;
  event.preventDefault();
});
document.addEventListener("keydown", (event) => {
  // Enter saves from anywhere but a button or link, which Enter activates
  const elsewhere = !event.target.closest("button, a, input, #query");
  if (event.key === "Enter" && elsewhere && qseg.plainKey(event)) {
    event.preventDefault();
    annotating.save();
  }
});
document.getElementById("clear").addEventListener("click", () => {
  flat.breaks = flat.breaks.map(() => false);
  flat.draw();
});
annotating.wire();
