// Sends the token to /login, which sets a cookie made from it and answers where to go: a
// path of this service, checked on the server as the browser will read it.
"use strict";
document.getElementById("login").addEventListener("submit", async (event) => {
  event.preventDefault();
  const asked = new URLSearchParams(location.search).get("next") || "/";
  const response = await fetch("/login?next=" + encodeURIComponent(asked), {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ token: document.getElementById("token").value }),
  });
  if (response.ok) {
    location.assign((await response.json()).next);
    return;
  }
  const message = document.getElementById("message");
  const refusal = await response.json().catch(() => ({}));
  message.textContent = response.status === 429 ? refusal.error : "Wrong token.";
  message.className = "message error";
});
