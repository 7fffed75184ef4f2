// Every page of the hosted arena (arena/serve/pages.py): the login form posts the
// token to /api/login, which sets the session cookie, then goes where the person
// was going; "log out" posts to /api/logout. The cookie is HttpOnly: no script here
// (or anywhere) reads it.
"use strict";

(() => {
  const form = document.getElementById("login-form");
  if (form) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const token = document.getElementById("token").value.trim();
      const reply = await fetch("/api/login", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ token }),
        credentials: "same-origin",
      });
      if (reply.ok) {
        location.assign(form.dataset.next); // a path of this site: the server checked it
        return;
      }
      const answer = await reply.json().catch(() => ({ error: `login failed (${reply.status})` }));
      document.getElementById("error").textContent = answer.error;
    });
  }
  // The lobby: the opponent list offers only bots that play the chosen game (a
  // named bot plays its own game, a simple bot any); when the opponent chosen does
  // not, the game's first named bot is chosen, else the first simple bot.
  const game = document.getElementById("game");
  const opponent = document.getElementById("opponent");
  if (game && opponent) {
    game.addEventListener("change", () => {
      const stem = game.selectedOptions[0].dataset.stem;
      const options = [...opponent.options];
      for (const option of options) {
        const fits = !option.dataset.stem || option.dataset.stem === stem;
        option.hidden = !fits;
        option.disabled = !fits; // iOS shows hidden options: a disabled one cannot be chosen
      }
      if (opponent.selectedOptions[0]?.disabled) {
        const fits = options.find((o) => o.dataset.stem === stem) ?? options.find((o) => !o.dataset.stem);
        if (fits) fits.selected = true;
      }
    });
  }
  // My agents: the chosen archive goes as the raw body of POST /api/agents (the
  // API's one way in, with the cookie), then the page shows the new version; while
  // a version is being checked, the page looks again every two seconds.
  const upload = document.getElementById("agent-form");
  if (upload) {
    upload.addEventListener("submit", async (event) => {
      event.preventDefault();
      const file = document.getElementById("archive").files[0];
      const said = document.getElementById("agent-error");
      const query = new URLSearchParams({
        name: document.getElementById("agent-name").value.trim(),
        game: document.getElementById("agent-game").value,
      });
      const button = document.getElementById("upload");
      button.disabled = true;
      const reply = await fetch(`/api/agents?${query}`, {
        method: "POST",
        body: file,
        headers: { "Content-Type": file.type || "application/octet-stream" },
        credentials: "same-origin",
      });
      if (reply.ok) {
        location.reload();
        return;
      }
      const answer = await reply.json().catch(() => ({ error: `upload failed (${reply.status})` }));
      said.textContent = answer.error;
      said.hidden = false;
      button.disabled = false;
    });
  }
  if (document.querySelector("#agents .status.checking")) {
    setTimeout(() => location.reload(), 2000);
  }
  const logout = document.getElementById("logout");
  if (logout) {
    logout.addEventListener("click", async () => {
      await fetch("/api/logout", { method: "POST", credentials: "same-origin" });
      location.assign("/login");
    });
  }
})();
