// Nested mode: the query as a row of parts (words, then groups); the annotator joins
// adjacent parts into groups until one tree covers the query. A tree is a leaf {word} or a
// node {children}; without the project's expert setting a node joins exactly two parts.
"use strict";

const nested = {
  words: [],
  parts: [],
  selected: new Set(),
  focused: 0,
  expert: false,

  show(item) {
    this.words = item.words;
    this.parts = item.answer ? [parseBrackets(item.answer)] : this.words.map((word) => ({ word }));
    this.selected = new Set();
    this.focused = 0;
    document.getElementById("source").textContent = item.answer
      ? "Your saved tree; ungroup to change it, then save again."
      : "New query.";
    this.draw();
    this.focus();
  },

  draw() {
    const box = document.getElementById("parts");
    box.replaceChildren();
    this.parts.forEach((part, i) => {
      const text = brackets(part);
      const button = qseg.element("button", {
        type: "button",
        class: "unit",
        "data-part": String(i),
        "aria-pressed": String(this.selected.has(i)),
        "aria-label": `part ${i + 1} of ${this.parts.length}: ${text}`,
        tabindex: i === this.focused ? "0" : "-1",
      }, text);
      button.addEventListener("click", (event) => {
        this.focused = i;
        if (event.shiftKey) this.extendTo(i);
        else this.toggle(i);
      });
      box.append(button);
    });
    const left = this.parts.length;
    document.getElementById("brackets").textContent =
      this.parts.map(brackets).join("  ") +
      (left > 1 ? `   (${left} parts: not one tree yet)` : "   (one tree: ready to save)");
    drawTree(document.getElementById("tree"), this.parts, this.words.length);
  },

  focus() {
    const button = document.querySelector(`.unit[data-part="${this.focused}"]`);
    if (button) button.focus();
  },

  toggle(i) {
    if (this.selected.has(i)) this.selected.delete(i);
    else this.selected.add(i);
    this.draw();
    this.focus();
  },

  extendTo(i) {
    const all = [...this.selected, i];
    const low = Math.min(...all);
    const high = Math.max(...all);
    this.selected = new Set(Array.from({ length: high - low + 1 }, (_, k) => low + k));
    this.draw();
    this.focus();
  },

  move(step, extend) {
    const from = this.focused;
    this.focused = Math.min(this.parts.length - 1, Math.max(0, this.focused + step));
    if (extend) {
      this.selected.add(from);
      this.extendTo(this.focused);
    } else {
      this.draw();
      this.focus();
    }
  },

  group() {
    const chosen = [...this.selected].sort((a, b) => a - b);
    if (chosen.length < 2) {
      qseg.say("Select two adjacent parts to group.", "error");
      return;
    }
    if (chosen[chosen.length - 1] - chosen[0] + 1 !== chosen.length) {
      qseg.say("Only adjacent parts can be grouped.", "error");
      return;
    }
    if (chosen.length > 2 && !this.expert) {
      qseg.say("A group joins exactly two parts: the trees are binary (Ramanath et al. 2013).", "error");
      return;
    }
    const node = { children: chosen.map((i) => this.parts[i]) };
    this.parts.splice(chosen[0], chosen.length, node);
    this.selected = new Set();
    this.focused = chosen[0];
    qseg.say(`Grouped ${brackets(node)}.`);
    this.draw();
    this.focus();
  },

  ungroup() {
    const part = this.parts[this.focused];
    if (!part || !part.children) {
      qseg.say("The part in focus is a word: there is nothing to ungroup.", "error");
      return;
    }
    this.parts.splice(this.focused, 1, ...part.children);
    this.selected = new Set();
    qseg.say(`Ungrouped ${brackets(part)}.`);
    this.draw();
    this.focus();
  },

  answer() {
    if (this.parts.length > 1) {
      return {
        error: `${this.parts.length} parts are not grouped yet: group until one bracket ` +
          "covers the whole query.",
      };
    }
    return { value: brackets(this.parts[0]) };
  },
};

function brackets(tree) {
  return tree.children ? `(${tree.children.map(brackets).join(" ")})` : tree.word;
}

function parseBrackets(text) {
  const stack = [[]];
  for (const token of text.match(/\(|\)|[^\s()]+/g) || []) {
    if (token === "(") stack.push([]);
    else if (token === ")") {
      const children = stack.pop();
      stack[stack.length - 1].push(children.length === 1 ? children[0] : { children });
    } else stack[stack.length - 1].push({ word: token });
  }
  const top = stack[0];
  return top.length === 1 ? top[0] : { children: top };
}

function drawTree(svg, parts, words) {
  // leaves evenly spaced along the bottom, every node above its children at its height
  const ns = "http://www.w3.org/2000/svg";
  const height = (tree) => (tree.children ? 1 + Math.max(...tree.children.map(height)) : 0);
  const tallest = Math.max(0, ...parts.map(height));
  const width = Math.max(600, words * 110);
  const step = Math.min(45, 150 / Math.max(1, tallest));
  const bottom = 30 + tallest * step;
  svg.setAttribute("viewBox", `0 0 ${width} ${bottom + 30}`);
  svg.setAttribute("aria-label", "picture of the tree: " + parts.map(brackets).join(" "));
  svg.replaceChildren();
  let leaf = 0;
  const add = (tag, attributes, text) => {
    const made = document.createElementNS(ns, tag);
    for (const [key, value] of Object.entries(attributes)) made.setAttribute(key, value);
    if (text) made.textContent = text;
    svg.append(made);
  };
  const place = (tree) => {
    if (!tree.children) {
      const x = (leaf++ + 0.5) * (width / words);
      add("text", { x, y: bottom + 20, "text-anchor": "middle" }, tree.word);
      return { x, y: bottom };
    }
    const kids = tree.children.map(place);
    const x = (kids[0].x + kids[kids.length - 1].x) / 2;
    const y = bottom - height(tree) * step;
    for (const kid of kids) add("line", { x1: x, y1: y, x2: kid.x, y2: kid.y });
    add("circle", { cx: x, cy: y, r: 4 });
    return { x, y };
  };
  parts.forEach(place);
}

const annotating = new qseg.Annotating("nested", nested);

document.getElementById("parts").addEventListener("keydown", (event) => {
  if (!qseg.plainKey(event) && !event.key.startsWith("Arrow")) return;
  const key = event.key.toLowerCase();
  if (event.key === "ArrowRight") nested.move(1, event.shiftKey);
  else if (event.key === "ArrowLeft") nested.move(-1, event.shiftKey);
  else if (event.key === " ") nested.toggle(nested.focused);
  else if (key === "g") nested.group();
  else if (key === "u") nested.ungroup();
  else if (event.key === "Escape") { nested.selected = new Set(); nested.draw(); nested.focus(); }
  else if (event.key === "Enter") annotating.save();
  else return;
  event.preventDefault();
});
document.addEventListener("keydown", (event) => {
  if (event.target.closest("button, a, input, #parts") || !qseg.plainKey(event)) return;
  const key = event.key.toLowerCase();
  if (event.key === "Enter") annotating.save();
  else if (key === "g") nested.group();
  else if (key === "u") nested.ungroup();
  else return;
  event.preventDefault();
});
document.getElementById("group").addEventListener("click", () => nested.group());
document.getElementById("ungroup").addEventListener("click", () => nested.ungroup());
document.getElementById("reset").addEventListener("click", () => {
  nested.parts = nested.words.map((word) => ({ word }));
  nested.selected = new Set();
  nested.draw();
});

qseg.api("/api/project").then((project) => {
  nested.expert = project.settings.expert === "1";
  document.getElementById("rule").textContent = nested.expert
    ? "Expert setting: a group may join more than two parts."
    : "Each group joins exactly two parts (binary trees).";
  annotating.wire();
}).catch((error) => qseg.say(error.message, "error"));
