// The chat page: vanilla JavaScript, no build step, no inline script (CSP).
(() => {
  const page = document.getElementById("chat");
  const conversationId = page.dataset.conversation;
  const log = document.getElementById("log");
  const form = document.getElementById("ask");
  const input = document.getElementById("question");
  const send = document.getElementById("send");
  const status = document.getElementById("status");
  let socket, current = null, busy = false, retryDelay = 1000;

  function bubble(role, text) {
    const div = document.createElement("div");
    div.dataset.key = String(++keys);
    div.className = "msg " + role;
    const span = document.createElement("span");
    span.className = "text";
    span.textContent = text || "";
    div.appendChild(span);
    document.getElementById("hint")?.remove();
    log.appendChild(div);
    div.scrollIntoView({block: "end"});
    return div;
  }
  function meta(div, cls) {
    const m = document.createElement("div");
    m.className = "meta " + (cls || "");
    div.appendChild(m);
    return m;
  }
  function setBusy(value) { busy = value; send.disabled = value; }

  // A contact request stays on the page as a card until the owner decides; the worker pushes the
  // decision to this socket and the card updates without a reload.
  const APPROVAL_TEXT = JSON.parse(document.getElementById("approval-texts").textContent);
  function approvalCard(id, status) {
    let card = document.getElementById("approval-" + id);
    if (!card) {
      card = document.createElement("div");
      card.id = "approval-" + id;
      document.getElementById("approvals").appendChild(card);
    }
    card.className = "approval " + status;
    card.dataset.status = status;
    card.textContent = APPROVAL_TEXT[status] || status;
  }
  document.querySelectorAll("#approvals .approval").forEach(c => approvalCard(c.id.slice(9), c.dataset.status));

  function connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    socket = new WebSocket(`${scheme}://${location.host}/ws/chat/${conversationId}/`);
    // the button is enabled only while the socket is open: a question is never silently dropped
    socket.onopen = () => { status.textContent = ""; retryDelay = 1000; setBusy(false); };
    socket.onclose = (e) => {
      busy = false; send.disabled = true;
      // final close codes: the server said why; reconnecting would only repeat it
      const final = {4404: "This conversation no longer exists. Reload the page.",
                     4403: "This conversation belongs to another browser session. Reload the page.",
                     4429: "Too many open chats from your address. Close one and reload."};
      if (final[e.code]) { status.textContent = final[e.code]; return; }
      // reconnect with backoff (1 s, 2 s, 4 s … at most 30 s), reset once connected
      status.textContent = "Disconnected — reconnecting…";
      setTimeout(connect, retryDelay);
      retryDelay = Math.min(retryDelay * 2, 30000);
    };
    socket.onmessage = (e) => handle(JSON.parse(e.data));
  }

  function handle(ev) {
    switch (ev.type) {
      case "token":
        if (!current) current = bubble("assistant", "");
        current.raw = (current.raw || "") + ev.text;
        renderAnswer(current, current.raw, null);  // markers held back until they are checked
        current.scrollIntoView({block: "end"});
        break;
      case "tool":
        status.textContent = ev.status === "started" ? `Looking things up (${ev.name})…` : "";
        break;
      case "citations":
        if (!current) current = bubble("assistant", "");
        current.citations = ev.citations;  // only sources that exist in the knowledge base
        break;
      case "approval":
        approvalCard(ev.approval_id, ev.status);
        break;
      case "trace":
        if (current) {
          const nodes = Object.entries(ev.node_latency_ms).map(([k, v]) => `${k} ${v} ms`).join(" · ");
          const t = meta(current, "why");
          t.textContent = `${ev.provider} · ${ev.latency_ms} ms (${nodes})`;
        }
        break;
      case "error":
        if (!current) current = bubble("assistant", "");
        current.classList.add("error");
        meta(current, "").textContent = `${ev.message} (${ev.code})`;
        // errors outside a turn are final; inside a turn a "done" event follows
        if (!ev.in_turn) { current = null; setBusy(false); }
        break;
      case "done":
        if (!current) current = bubble("assistant", "");
        // the checked answer replaces the streamed text: numbered markers for checked sources only
        renderAnswer(current, ev.answer || current.raw || "", ev.citations || current.citations || []);
        current.dataset.messageId = ev.message_id;
        addWhy(current);
        if (ev.outcome === "answered") addRating(current);
        current = null; setBusy(false); status.textContent = "";
        break;
    }
  }

  // Citations: "[source: Title]" in the answer becomes a numbered marker linked to a list of
  // sources under the answer. While streaming, markers (and a marker still being typed) are
  // held back, so a source that turns out not to exist is never shown. Text goes in with
  // textContent and links are built as elements: nothing from the model is parsed as HTML.
  const MARKER = /\[source:\s*([^\]\n]+?)\s*\]/g;
  function renderAnswer(div, raw, citations) {
    const text = div.querySelector(".text");
    text.replaceChildren();
    let visible = raw;
    if (citations === null) {
      const open = raw.lastIndexOf("[");
      if (open >= 0 && raw.indexOf("]", open) < 0) visible = raw.slice(0, open);  // an unfinished marker
    }
    const known = new Map((citations || []).map(c => [c.title, c.url]));
    const numbers = new Map();
    let last = 0;
    for (const m of visible.matchAll(MARKER)) {
      text.append(visible.slice(last, m.index).replace(/\s+$/, ""));
      last = m.index + m[0].length;
      if (!known.has(m[1])) continue;  // unchecked (streaming) or unknown: not shown
      if (!numbers.has(m[1])) numbers.set(m[1], numbers.size + 1);
      const sup = document.createElement("sup");
      const a = document.createElement("a");
      a.href = `#src-${div.dataset.key || ""}-${numbers.get(m[1])}`;
      a.textContent = `[${numbers.get(m[1])}]`;
      a.setAttribute("aria-label", `source ${numbers.get(m[1])}: ${m[1]}`);
      sup.append(a); text.append(sup);
    }
    text.append(visible.slice(last));
    div.querySelector(".sources")?.remove();
    if (numbers.size) {
      const list = document.createElement("ol");
      list.className = "meta sources";
      for (const [title, n] of numbers) {
        const li = document.createElement("li");
        li.id = `src-${div.dataset.key || ""}-${n}`;
        const a = document.createElement("a");
        a.href = known.get(title) || "#"; a.textContent = title;
        li.append(a); list.append(li);
      }
      text.after(list);
    }
  }
  let keys = 0;
  // answers already on the page (a reload): their sources come from the server-rendered links
  document.querySelectorAll(".msg.assistant").forEach(div => {
    div.dataset.key = String(++keys);
    const links = [...div.querySelectorAll(".cites a")].map(a => ({title: a.textContent, url: a.getAttribute("href")}));
    div.querySelector(".cites")?.remove();
    renderAnswer(div, div.querySelector(".text").textContent, links);
  });

  // Staff only: a "why" button beside each answer opens the turn's trace in a side panel.
  const whyPanel = document.getElementById("why-panel");
  function addWhy(div) {
    if (!whyPanel || !div.dataset.messageId || div.querySelector(".why-open")) return;
    const b = document.createElement("button");
    b.type = "button"; b.className = "why-open"; b.textContent = "why";
    b.setAttribute("aria-controls", "why-panel");
    b.onclick = async () => {
      const res = await fetch(`/why/${div.dataset.messageId}/`, {credentials: "same-origin"});
      // server-rendered and escaped by Django's templates: safe to insert
      document.getElementById("why-body").innerHTML = res.ok ? await res.text() : "";
      whyPanel.hidden = false; whyPanel.focus();
    };
    meta(div, "whybar").appendChild(b);
  }
  if (whyPanel) {
    document.getElementById("why-close").onclick = () => { whyPanel.hidden = true; };
    document.querySelectorAll(".msg.assistant[data-message-id]").forEach(addWhy);
  }

  function csrfToken() {
    const match = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  // One rating per answer: rating again replaces it (the pressed button shows the current one).
  function addRating(div) {
    const r = meta(div, "rate");
    for (const [label, value] of [["Helpful", 1], ["Not helpful", -1]]) {
      const b = document.createElement("button");
      b.type = "button"; b.textContent = label; b.setAttribute("aria-pressed", "false");
      b.onclick = async () => {
        const res = await fetch("/api/feedback", {method: "POST", credentials: "same-origin",
          headers: {"Content-Type": "application/json", "X-CSRFToken": csrfToken()},
          body: JSON.stringify({message_id: Number(div.dataset.messageId), rating: value})});
        if (res.ok) {
          r.querySelectorAll("button").forEach(x => x.setAttribute("aria-pressed", "false"));
          b.setAttribute("aria-pressed", "true");
        }
      };
      r.appendChild(b);
    }
  }

  // starter questions: one click asks them
  document.querySelectorAll("button.starter").forEach(b => b.addEventListener("click", () => {
    input.value = b.textContent; form.requestSubmit();
  }));

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text || busy || socket.readyState !== WebSocket.OPEN) return;
    bubble("user", text);
    current = null; setBusy(true); input.value = "";
    socket.send(JSON.stringify({type: "ask", text}));
  });
  connect();
})();
