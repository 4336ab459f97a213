// The start page: who annotates, in which mode; the project's size.
"use strict";

async function start() {
  const input = document.getElementById("annotator");
  input.value = qseg.annotator() || "";
  try {
    const project = await qseg.api("/api/project");
    document.getElementById("project").textContent = project.name;
    document.getElementById("counts").textContent =
      `${project.queries} queries, ${project.annotators.length} annotators so far` +
      (project.settings.prefill ? `; the flat page starts from ${project.settings.prefill}` : "") +
      (project.settings.expert === "1" ? "; nested nodes may have more than two parts" : "");
  } catch (error) {
    qseg.say(error.message, "error");
  }
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
}

start();
