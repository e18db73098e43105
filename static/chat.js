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
        current.querySelector(".text").textContent += ev.text;
        current.scrollIntoView({block: "end"});
        break;
      case "tool":
        status.textContent = ev.status === "started" ? `Looking things up (${ev.name})…` : "";
        break;
      case "citations": {
        if (!current) current = bubble("assistant", "");
        const c = meta(current, "cites");
        for (const cite of ev.citations) {
          const a = document.createElement("a");
          a.href = cite.url || "#"; a.textContent = cite.title; c.appendChild(a);
        }
        break;
      }
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
        // the checked answer replaces the streamed text (unknown citations removed)
        if (ev.answer) current.querySelector(".text").textContent = ev.answer;
        current.dataset.messageId = ev.message_id;
        addWhy(current);
        if (ev.outcome === "answered") addRating(current);
        current = null; setBusy(false); status.textContent = "";
        break;
    }
  }

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
