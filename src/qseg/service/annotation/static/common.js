// What every annotation page shares: calls to the JSON API, the annotator and mode of the
// page's address, and one status line that screen readers announce.
"use strict";

const qseg = {
  async api(path, options = {}) {
    const init = { headers: { "Content-Type": "application/json" }, ...options };
    if (init.body !== undefined && typeof init.body !== "string") {
      init.body = JSON.stringify(init.body);
    }
    const response = await fetch(path, init);
    const body = await response.json().catch(() => ({}));
    if (!response.ok) {
      throw new Error(body.error || `${response.status} ${response.statusText}`);
    }
    return body;
  },

  param(name) {
    return new URLSearchParams(location.search).get(name);
  },

  annotator() {
    const given = qseg.param("annotator") || localStorage.getItem("qseg.annotator");
    if (given) localStorage.setItem("qseg.annotator", given);
    return given;
  },

  // a shortcut is a key pressed alone: not held down, not with Ctrl, Alt or Cmd, not while
  // an input method composes
  plainKey(event) {
    return !(event.repeat || event.ctrlKey || event.altKey || event.metaKey || event.isComposing);
  },

  say(text, kind = "") {
    const line = document.getElementById("message");
    line.textContent = text;
    line.className = "message " + kind;
  },

  // "1 answer", "2 answers"
  count(n, singular, plural = `${singular}s`) {
    return `${n} ${n === 1 ? singular : plural}`;
  },

  element(tag, attributes = {}, text = "") {
    const made = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes)) made.setAttribute(key, value);
    if (text) made.textContent = text;
    return made;
  },
};

// Going through the queries: load one, save the answer, go on or back. A mode's page gives
// a view with show(item), which draws the query and the answer, and answer(), which returns
// {value} to save or {error} saying why it cannot be saved yet.
qseg.Annotating = class {
  constructor(mode, view) {
    this.mode = mode;
    this.view = view;
    this.name = qseg.annotator();
    this.item = null;
    this.saving = false;
    this.asked = 0; // requests for a query made so far: only the latest one's answer is shown
  }

  // `moved`: a step to another query (save, previous, next), which the browser's Back
  // undoes; the first load and Back itself replace the address instead
  async load(index, moved = false) {
    if (!this.name) {
      location.assign("/");
      return;
    }
    const where = index === undefined || index === null ? "" : `&index=${index}`;
    const asked = ++this.asked;
    try {
      const item = await qseg.api(
        `/api/item?annotator=${encodeURIComponent(this.name)}&mode=${this.mode}${where}`);
      if (asked !== this.asked) return; // a later request was made meanwhile: it wins
      this.item = item;
      const address = `/${this.mode}?annotator=${encodeURIComponent(this.name)}&index=${item.index}`;
      if (moved) history.pushState(null, "", address);
      else history.replaceState(null, "", address);
      this.progress(item.done);
      this.view.show(item);
      document.getElementById("previous").disabled = item.index === 0;
      document.getElementById("next").disabled = item.index + 1 >= item.total;
    } catch (error) {
      qseg.say(error.message, "error");
    }
  }

  progress(done) {
    const item = this.item;
    const order = item.order || { kind: "added" };
    const learned = order.kind !== "uncertain" ? "" : order.learned_from
      ? `; least sure first, by a model that learned from ${order.learned_from} answered queries`
      : "; least sure first";
    document.getElementById("progress").textContent =
      `${this.name}: query ${item.index + 1} of ${item.total}, ${done} of ${item.total} done` +
      learned;
    const bar = document.getElementById("bar");
    bar.max = item.total;
    bar.value = done;
  }

  async save() {
    // one save at a time, of the query shown when it was asked for: a held or doubled
    // Enter must not save the next query unseen
    const item = this.item;
    if (!item || this.saving) return;
    const given = this.view.answer();
    if (given.error) {
      qseg.say(given.error, "error");
      return;
    }
    this.saving = true;
    try {
      const saved = await qseg.api("/api/answers", {
        method: "POST",
        body: {
          annotator: this.name, mode: this.mode, qid: item.qid, value: given.value,
          suggested: Boolean(item.suggested),
        },
      });
      item.answer = given.value;
      const uncertain = item.order && item.order.kind === "uncertain";
      if (saved.done < saved.total && uncertain) {
        // the order may have changed since (a retrain): the next unanswered one in it
        await this.load(null, true);
        qseg.say(`Saved: ${given.value}`, "ok");
      } else if (item.index + 1 < item.total && !uncertain) {
        await this.load(item.index + 1, true);
        qseg.say(`Saved: ${given.value}`, "ok");
      } else {
        this.progress(saved.done);
        qseg.say(`Saved. ${saved.done} of ${saved.total} done` +
          (saved.done === saved.total ? ": all queries are done. Thank you!" : "."), "ok");
      }
    } catch (error) {
      qseg.say(error.message, "error");
    } finally {
      this.saving = false;
    }
  }

  wire() {
    document.getElementById("save").addEventListener("click", () => this.save());
    document.getElementById("previous").addEventListener("click", () => {
      if (this.item && this.item.index > 0) this.go(this.item.index - 1);
    });
    document.getElementById("next").addEventListener("click", () => {
      if (this.item && this.item.index + 1 < this.item.total) this.go(this.item.index + 1);
    });
    window.addEventListener("popstate", () => {
      const index = qseg.param("index");
      qseg.say("");
      this.load(index === null ? null : Number(index));
    });
    const index = qseg.param("index");
    this.load(index === null ? null : Number(index));
  }

  // to another query without saving: what was said about the last one no longer holds
  go(index) {
    qseg.say("");
    this.load(index, true);
  }
};
