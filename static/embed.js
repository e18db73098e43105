/* Twinsite's launcher for any website: <script src="https://twin.example.org/embed.js" data-lang="nl" async></script>
   It adds one button; the chat itself opens in an iframe served by Twinsite, so this page's
   styles and scripts cannot reach it and it cannot reach them. Styles are set through the CSSOM
   inside a shadow root, which a strict Content-Security-Policy on the host page allows. */
(() => {
  "use strict";
  const script = document.currentScript;
  if (!script || window.__twinsite) return;
  window.__twinsite = true;
  const base = new URL(script.src).origin;
  const lang = (script.dataset.lang || document.documentElement.lang || navigator.language || "en").slice(0, 2);
  const host = document.createElement("div");
  const root = host.attachShadow({mode: "open"});  // its styles apart from the page's; the chat is in the iframe
  const css = (el, rules) => Object.assign(el.style, rules);
  const dark = window.matchMedia && matchMedia("(prefers-color-scheme: dark)").matches;
  css(host, {position: "fixed", right: "16px", bottom: "16px", zIndex: "2147483000"});

  const button = document.createElement("button");
  button.type = "button";
  button.setAttribute("aria-expanded", "false");
  css(button, {font: "600 15px/1.2 system-ui, sans-serif", color: "#fff", border: "0", borderRadius: "999px",
    padding: "12px 18px", cursor: "pointer", boxShadow: "0 4px 14px rgba(0,0,0,.25)", background: "#2449b8"});
  const panel = document.createElement("div");
  panel.id = "twinsite-panel";
  panel.setAttribute("role", "dialog");
  let shown = false;
  const show = (value) => { shown = value; css(panel, {display: value ? "flex" : "none"}); };
  const small = () => window.innerWidth < 560;
  function place() {
    css(panel, small()
      ? {position: "fixed", inset: "0", width: "100vw", height: "100dvh", borderRadius: "0"}
      : {position: "fixed", right: "16px", bottom: "76px", width: "400px", height: "min(640px, calc(100vh - 100px))",
         borderRadius: "14px"});
  }
  css(panel, {overflow: "hidden", boxShadow: "0 10px 40px rgba(0,0,0,.3)", background: dark ? "#11141b" : "#fff",
    flexDirection: "column"});
  place();
  show(false);
  window.addEventListener("resize", place);
  const bar = document.createElement("div");
  css(bar, {display: "flex", justifyContent: "flex-end", padding: "4px", background: dark ? "#1a1f29" : "#f7f8fa"});
  const close = document.createElement("button");
  close.type = "button";
  css(close, {font: "14px system-ui, sans-serif", border: "1px solid #888", borderRadius: "8px", padding: "4px 10px",
    background: "transparent", color: dark ? "#e6e8ee" : "#1d2330", cursor: "pointer"});
  bar.append(close);
  const body = document.createElement("div");
  css(body, {flex: "1", display: "flex"});
  panel.append(bar, body);
  root.append(panel, button);

  // The conversation's token, told by the frame (browsers deny a third-party frame its own
  // storage): kept here, in this site's storage, so a reload finds the conversation again.
  const KEY = "twinsite-token";
  window.addEventListener("message", (e) => {
    if (e.origin !== base || !e.data) return;
    if (e.data.type === "twinsite-token" && typeof e.data.token === "string") {
      try {
        if (e.data.token) localStorage.setItem(KEY, e.data.token); else localStorage.removeItem(KEY);
      } catch { /* storage blocked */ }
    } else if (e.data.type === "twinsite-token-request" && frame && e.source === frame.contentWindow) {
      // the frame asks for the conversation this site keeps: told by message, never in its URL
      let token = "";
      try { token = localStorage.getItem(KEY) || ""; } catch { /* storage blocked */ }
      frame.contentWindow.postMessage({type: "twinsite-token", token}, base);
    }
  });
  let config = null;
  let frame = null;
  function open() {
    show(true);
    button.setAttribute("aria-expanded", "true");
    if (!config.allowed) {  // a clear refusal, not a broken frame
      const note = document.createElement("p");
      css(note, {font: "15px/1.5 system-ui, sans-serif", padding: "16px", margin: "0", color: dark ? "#e6e8ee" : "#1d2330"});
      note.setAttribute("role", "alert");
      note.textContent = config.refused;
      body.replaceChildren(note);
      close.focus();
      return;
    }
    if (!frame) {
      frame = document.createElement("iframe");
      frame.src = `${base}/embed/?${new URLSearchParams({lang, host: location.origin})}`;
      frame.title = config.label;
      frame.allow = "clipboard-write";
      css(frame, {border: "0", width: "100%", height: "100%", colorScheme: "normal"});
      body.append(frame);
    }
    frame.focus();
  }
  function hide() {
    show(false);
    button.setAttribute("aria-expanded", "false");
    button.focus();
  }
  button.addEventListener("click", () => (shown ? hide() : open()));
  close.addEventListener("click", hide);
  root.addEventListener("keydown", (e) => { if (e.key === "Escape" && shown) hide(); });

  fetch(`${base}/embed/config?lang=${encodeURIComponent(lang)}`, {credentials: "omit"})
    .then((r) => r.json())
    .then((c) => {
      config = c;
      button.textContent = c.label;
      button.setAttribute("aria-controls", "twinsite-panel");
      css(button, {background: c.color});
      close.textContent = c.close;
      panel.setAttribute("aria-label", c.label);
      document.body.append(host);
    })
    .catch(() => { /* the twin is unreachable: no button rather than a broken one */ });
})();
