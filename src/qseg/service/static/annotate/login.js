// Sends the token to /login, which sets it as an HttpOnly cookie; then goes where asked.
"use strict";
document.getElementById("login").addEventListener("submit", async (event) => {
  event.preventDefault();
  // a path of this service only: never another host, never a javascript: address
  const asked = new URLSearchParams(location.search).get("next") || "/";
  const next = /^\/(?![\/\\])/.test(asked) ? asked : "/";
  const response = await fetch("/login?next=" + encodeURIComponent(next), {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ token: document.getElementById("token").value }),
  });
  if (response.ok || response.redirected) {
    location.assign(next);
  } else {
    const message = document.getElementById("message");
    message.textContent = "Wrong token.";
    message.className = "message error";
  }
});
