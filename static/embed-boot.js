// The embedded chat's first step: open the conversation this browser already has on this site,
// or start a new one. Its token comes from the frame's own (partitioned) storage, else from the
// host page (asked by postMessage: only a listed origin is asked or believed), and is posted,
// never put in a URL (access logs, history and a shared link would carry it).
(() => {
  const query = new URLSearchParams(location.search);
  const host = document.getElementById("boot").dataset.host || "";
  let done = false;
  function go(token) {
    if (done) return;
    done = true;
    if (!token) {
      query.set("new", "1");
      location.replace(`${location.pathname}?${query}`);
      return;
    }
    const form = document.createElement("form");
    form.method = "post";
    form.action = `${location.pathname}?${query}`;
    const field = document.createElement("input");
    field.type = "hidden";
    field.name = "t";
    field.value = token;
    form.append(field);
    document.body.append(form);
    form.submit();
  }
  let token = null;
  try { token = localStorage.getItem("twinsite-conversation"); } catch { /* storage blocked */ }
  if (token || !host || window.parent === window) { go(token); return; }
  window.addEventListener("message", (e) => {
    if (e.origin === host && e.data && e.data.type === "twinsite-token" && typeof e.data.token === "string") {
      go(e.data.token);
    }
  });
  window.parent.postMessage({type: "twinsite-token-request"}, host);
  setTimeout(() => go(null), 1500);  // a host page that does not answer: a new chat
})();
