// The embedded chat's first step: reopen the conversation this browser already has on this site
// (its token in the frame's own, partitioned storage), or start a new one.
(() => {
  const query = new URLSearchParams(location.search);
  let token = null;
  try { token = localStorage.getItem("twinsite-conversation"); } catch { /* storage blocked */ }
  if (token) query.set("t", token); else query.set("new", "1");
  location.replace(`${location.pathname}?${query}`);
})();
