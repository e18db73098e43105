// The chat page: vanilla JavaScript, no build step, no inline script (CSP).
// Every sentence shown here comes from the page's "twin-texts" JSON (chat/texts.py, in the
// page's language). Answers are Markdown, parsed by markdown-it (static/vendor) with raw HTML
// off and turned into DOM elements from a short list: nothing the model wrote is parsed as HTML.
(() => {
  "use strict";
  const T = JSON.parse(document.getElementById("twin-texts").textContent);
  const page = document.getElementById("chat");
  // none until the first question: loading the page starts no conversation (start() does)
  let conversationId = page.dataset.conversation || "";
  const log = document.getElementById("log");
  const form = document.getElementById("ask");
  const input = document.getElementById("question");
  const send = document.getElementById("send");
  const status = document.getElementById("status");
  const md = window.markdownit("commonmark", {html: false, linkify: false, typographer: false});
  // Embedded in another site (embed.js): the conversation is a signed token kept in this frame's
  // storage, sent with the socket and the feedback; no cookies needed.
  const embedded = page.dataset.embedded === "1";
  let token = page.dataset.token || "";
  function keepToken(value) {
    token = value;
    try { localStorage.setItem("twinsite-conversation", token); } catch { /* storage blocked */ }
    // the host page keeps it too (its own storage is first-party): only to the listed origin
    if (page.dataset.host && window.parent !== window) {
      window.parent.postMessage({type: "twinsite-token", token}, page.dataset.host);
    }
  }
  if (token) keepToken(token);
  if (embedded) {
    document.getElementById("new").addEventListener("click", () => {
      try { localStorage.removeItem("twinsite-conversation"); } catch { /* storage blocked */ }
      if (page.dataset.host && window.parent !== window) {
        window.parent.postMessage({type: "twinsite-token", token: ""}, page.dataset.host);
      }
      const query = new URLSearchParams({lang: page.dataset.lang, new: "1"});
      if (page.dataset.host) query.set("host", page.dataset.host);
      location.replace(`${location.pathname}?${query}`);
    });
  }

  let socket = null, current = null, busy = false, synced = false, retryDelay = 1000, keys = 0;
  let resyncTimer = null, resyncs = 0, starting = false, pending = null;

  const say = (key, values) => (T[key] || key).replace(/\{(\w+)\}/g, (m, k) => (values && k in values ? values[k] : m));
  const setStatus = (text) => { status.textContent = text || ""; };
  const canAsk = () => !busy && (conversationId ? synced && socket && socket.readyState === WebSocket.OPEN : !starting);
  const updateSend = () => { send.disabled = !canAsk(); };
  function setBusy(value) { busy = value; updateSend(); }

  // --- messages -------------------------------------------------------------------------------
  function bubble(role) {
    const div = document.createElement("article");
    div.className = "msg " + role;
    div.dataset.key = String(++keys);
    const heading = document.createElement("h2");
    heading.className = "visually-hidden";
    heading.textContent = role === "user" ? T["ui.you"] : T["ui.twin"];
    const text = document.createElement("div");
    text.className = "text";
    div.append(heading, text);
    document.getElementById("hint")?.remove();
    log.appendChild(div);
    div.scrollIntoView({block: "end"});
    return div;
  }
  function note(div, cls, text) {
    div.querySelector(".note." + cls)?.remove();
    const p = document.createElement("p");
    p.className = "note " + cls;
    p.textContent = text;
    div.querySelector(".text").before(p);
    return p;
  }
  function meta(div, cls) {
    const m = document.createElement("div");
    m.className = "meta " + cls;
    div.appendChild(m);
    return m;
  }
  const lastMessageId = () => Math.max(0, ...[...log.querySelectorAll(".msg.assistant[data-message-id]")]
    .map(d => Number(d.dataset.messageId)));

  // --- Markdown to DOM ------------------------------------------------------------------------
  // Citation markers "[source: Title]" become numbered links to the sources list under the
  // answer. Only checked citations (the server's list) get a number; while streaming, every
  // marker, and one still being typed, is held back, so an unknown source never shows.
  const MARKER = /\s*\[source:\s*([^\]\n]+?)\s*\]/g;
  const PLACEHOLDER = /\uE000(\d+)\uE001/g;
  const BLOCK = new Set(["p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "em", "strong",
    "s", "hr", "br", "table", "thead", "tbody", "tr", "th", "td"]);
  const HEADING = {h1: "h3", h2: "h3", h3: "h4", h4: "h5", h5: "h6", h6: "h6"};  // inside an answer

  function safeHref(href) {
    try {
      const url = new URL(href, location.href);
      return ["http:", "https:", "mailto:"].includes(url.protocol) ? url.href : null;
    } catch { return null; }
  }
  function inlineText(parent, text, div) {
    let last = 0;
    for (const m of text.matchAll(PLACEHOLDER)) {
      if (m.index > last) parent.append(text.slice(last, m.index));
      const n = Number(m[1]);
      const sup = document.createElement("sup");
      const a = document.createElement("a");
      a.href = `#src-${div.dataset.key}-${n}`;
      a.textContent = `[${n}]`;
      a.setAttribute("aria-label", say("ui.source_label", {n, title: div.sourceTitles[n - 1]}));
      sup.append(a);
      parent.append(sup);
      last = m.index + m[0].length;
    }
    if (last < text.length) parent.append(text.slice(last));
  }
  function renderTokens(tokens, root, div) {
    const stack = [root];
    const top = () => stack[stack.length - 1];
    for (const t of tokens) {
      if (t.type === "inline") { renderTokens(t.children || [], top(), div); continue; }
      if (t.nesting === 1) {
        let el;
        if (t.type === "link_open") {
          const href = safeHref(t.attrGet("href") || "");
          el = document.createElement(href ? "a" : "span");
          if (href) {
            el.href = href;
            if (new URL(href).origin !== location.origin) { el.target = "_blank"; el.rel = "noopener noreferrer nofollow"; }
          }
        } else {
          const tag = HEADING[t.tag] || t.tag;
          el = document.createElement(BLOCK.has(t.tag) ? tag : "span");
          if (t.tag === "ol" && t.attrGet("start")) el.start = Number(t.attrGet("start"));
        }
        top().append(el);
        stack.push(el);
      } else if (t.nesting === -1) {
        if (stack.length > 1) stack.pop();
      } else if (t.type === "text") {
        inlineText(top(), t.content, div);
      } else if (t.type === "code_inline") {
        const code = document.createElement("code"); code.textContent = t.content; top().append(code);
      } else if (t.type === "fence" || t.type === "code_block") {
        const pre = document.createElement("pre"), code = document.createElement("code");
        code.textContent = t.content; pre.append(code); top().append(pre);
      } else if (t.type === "softbreak") {
        top().append("\n");
      } else if (t.type === "hardbreak" || t.type === "hr") {
        top().append(document.createElement(t.type === "hr" ? "hr" : "br"));
      } else if (t.type === "image") {
        top().append(t.content);  // no images from answers: their alt text only
      } else if (t.content) {
        top().append(t.content);  // anything else (html is off): as text
      }
    }
  }
  function renderAnswer(div, raw, citations) {
    let visible = raw || "";
    if (citations === null) {  // streaming: hold back a marker still being typed
      const open = visible.lastIndexOf("[");
      if (open >= 0 && visible.indexOf("]", open) < 0) visible = visible.slice(0, open);
    }
    const known = new Map((citations || []).map(c => [c.title, c.url]));
    const numbers = new Map();
    visible = visible.replace(/[\uE000\uE001]/g, "").replace(MARKER, (m, title) => {
      if (!known.has(title)) return "";  // unchecked (streaming) or unknown: not shown
      if (!numbers.has(title)) numbers.set(title, numbers.size + 1);
      return `\uE000${numbers.get(title)}\uE001`;
    });
    div.sourceTitles = [...numbers.keys()];
    const text = div.querySelector(".text");
    const fresh = document.createElement("div");
    fresh.className = "text";
    renderTokens(md.parse(visible, {}), fresh, div);
    text.replaceWith(fresh);
    div.querySelector(".sources")?.remove();
    if (numbers.size) {
      const box = document.createElement("nav");
      box.className = "sources";
      box.setAttribute("aria-label", T["ui.sources"]);
      const list = document.createElement("ol");
      for (const [title, n] of numbers) {
        const li = document.createElement("li");
        li.id = `src-${div.dataset.key}-${n}`;
        const a = document.createElement("a");
        a.href = known.get(title) || "#"; a.textContent = title;
        li.append(a); list.append(li);
      }
      box.append(list);
      fresh.after(box);
    }
  }
  let frame = 0;
  function scheduleRender(div) {  // at most once per animation frame while tokens pour in
    if (frame) return;
    frame = requestAnimationFrame(() => { frame = 0; renderAnswer(div, div.raw, null); div.scrollIntoView({block: "end"}); });
  }

  // --- outcomes -------------------------------------------------------------------------------
  const OUTCOME_NOTE = {declined: "ui.label.declined", aborted: "ui.label.aborted", error: "ui.label.error"};
  function finish(div, ev) {
    if (frame) { cancelAnimationFrame(frame); frame = 0; }
    div.removeAttribute("aria-busy");
    div.classList.remove("incomplete");
    div.querySelector(".note.incomplete")?.remove();
    renderAnswer(div, ev.answer ?? div.raw ?? "", ev.citations || []);
    if (ev.message_id) div.dataset.messageId = ev.message_id;
    const outcome = ev.outcome || "";
    if (outcome) { div.classList.add(outcome); div.dataset.outcome = outcome; }
    if (outcome === "refused") {
      const budget = ev.refusal === "budget";
      if (budget) div.classList.add("budget");
      note(div, "label", T[budget ? "ui.label.budget" : "ui.label.refused"]);
    } else if (OUTCOME_NOTE[outcome]) {
      note(div, "label", T[OUTCOME_NOTE[outcome]]);
    }
    addWhy(div);
    if (outcome === "answered") addRating(div);
  }
  function errorBubble(ev) {
    const div = bubble("assistant");
    div.classList.add("error", ev.code === "rate_limited" ? "rate-limited" : "failed");
    note(div, "label", T[ev.code === "rate_limited" ? "ui.label.rate_limited" : "ui.label.error"]);
    div.querySelector(".text").textContent = ev.message || T["error.internal"];
    return div;
  }

  // --- contact-request cards ------------------------------------------------------------------
  // A card stays on the page until the owner decides; the decision is pushed to the socket and
  // the card updates without a reload.
  function approvalCard(id, state) {
    let card = document.getElementById("approval-" + id);
    if (!card) {
      card = document.createElement("div");
      card.id = "approval-" + id;
      document.getElementById("approvals").appendChild(card);
    }
    card.className = "approval " + state;
    card.dataset.status = state;
    card.setAttribute("role", "status");
    card.replaceChildren();
    const title = document.createElement("strong");
    title.textContent = T["ui.card_title"];
    const body = document.createElement("span");
    body.textContent = T["card." + state] || state;
    card.append(title, " ", body);
  }
  document.querySelectorAll("#approvals .approval").forEach(c => approvalCard(c.id.slice(9), c.dataset.status));

  // --- the socket -----------------------------------------------------------------------------
  function connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    synced = false; updateSend();
    // the embedded chat's token goes as a subprotocol, never in the URL (access logs keep URLs)
    const query = embedded ? `?lang=${page.dataset.lang}` : "";
    const protocols = token ? ["twinsite", "twinsite-token." + btoa(token).replace(/\+/g, "-").replace(/\//g, "_")
      .replace(/=+$/, "")] : [];
    socket = new WebSocket(`${scheme}://${location.host}/ws/chat/${conversationId}/${query}`, protocols);
    socket.onopen = () => {
      retryDelay = 1000;
      // first what this page missed (answers that finished while it was away), then questions
      socket.send(JSON.stringify({type: "sync", after: lastMessageId()}));
    };
    socket.onclose = (e) => {
      synced = false; updateSend();
      if (current) {  // never a half answer presented as whole
        current.classList.add("incomplete");
        current.removeAttribute("aria-busy");
        note(current, "incomplete", T["ui.incomplete"]);
        current = null;
      }
      busy = false;
      // final close codes: the server said why (an error event came first); reconnecting would repeat it
      if ([4403, 4404, 4429].includes(e.code)) return;
      setStatus(T["ui.reconnecting"]);
      setTimeout(connect, retryDelay);  // backoff: 1 s, 2 s, 4 s … at most 30 s, reset once open
      retryDelay = Math.min(retryDelay * 2, 30000);
    };
    socket.onmessage = (e) => handle(JSON.parse(e.data));
  }

  function history(ev) {
    for (const a of ev.approvals || []) approvalCard(a.approval_id, a.status);
    const seen = new Set([...log.querySelectorAll(".msg[data-message-id]")].map(d => d.dataset.messageId));
    const fresh = (ev.messages || []).filter(m => !seen.has(String(m.message_id)));
    if (fresh.length) log.querySelectorAll(".msg.incomplete").forEach(d => d.remove());  // the stored answer replaces it
    for (const m of fresh) finish(bubble("assistant"), m);
    synced = true;
    if (pending !== null) {  // the first question, asked before its conversation existed
      socket.send(JSON.stringify({type: "ask", text: pending}));
      pending = null;
    }
    clearTimeout(resyncTimer);
    if (ev.running && resyncs < 30) {  // a turn of this conversation is still running: ask again soon
      setStatus(T["ui.recovering"]);
      resyncs += 1;
      resyncTimer = setTimeout(() => socket?.readyState === WebSocket.OPEN &&
        socket.send(JSON.stringify({type: "sync", after: lastMessageId()})), 1500);
    } else {
      resyncs = 0;
      setStatus("");
    }
    updateSend();
  }

  function handle(ev) {
    switch (ev.type) {
      case "history":
        history(ev);
        break;
      case "token":
        if (!current) { current = bubble("assistant"); current.setAttribute("aria-busy", "true"); }
        current.raw = (current.raw || "") + ev.text;
        scheduleRender(current);
        break;
      case "tool":
        setStatus(ev.status === "started" ? (T["ui.tool." + ev.name] || T["ui.tool.other"]) : "");
        break;
      case "citations":
        if (current) current.citations = ev.citations;
        break;
      case "approval":
        approvalCard(ev.approval_id, ev.status);
        break;
      case "error":
        if (ev.in_turn && current) {
          current.classList.add("error");
        } else if (!ev.in_turn) {
          errorBubble(ev);
          if (current) { current.remove(); current = null; }
          setBusy(false);
        }
        // inside a turn, "done" follows with the outcome
        break;
      case "done":
        if (!current) current = bubble("assistant");
        finish(current, ev);
        current = null;
        setBusy(false);
        setStatus("");
        break;
    }
  }

  // --- staff: the "why" panel -----------------------------------------------------------------
  const whyPanel = document.getElementById("why-panel");
  let whyOpener = null;
  function addWhy(div) {
    if (!whyPanel || !div.dataset.messageId || div.querySelector(".why-open")) return;
    const b = document.createElement("button");
    b.type = "button"; b.className = "why-open"; b.textContent = T["ui.why"];
    b.setAttribute("aria-controls", "why-panel");
    b.addEventListener("click", async () => {
      const res = await fetch(`/why/${div.dataset.messageId}/`, {credentials: "same-origin"});
      // server-rendered by Django's templates, every value escaped: safe to insert
      document.getElementById("why-body").innerHTML = res.ok ? await res.text() : "";
      whyOpener = b;
      whyPanel.hidden = false;
      whyPanel.focus();
    });
    meta(div, "whybar").appendChild(b);
  }
  function closeWhy() {
    whyPanel.hidden = true;
    whyOpener?.focus();
  }
  if (whyPanel) {
    document.getElementById("why-close").addEventListener("click", closeWhy);
    whyPanel.addEventListener("keydown", (e) => { if (e.key === "Escape") closeWhy(); });
    document.querySelectorAll(".msg.assistant[data-message-id]").forEach(addWhy);
  }

  // --- feedback: one rating per answer (rating again replaces it), an optional comment --------
  function csrfToken() {
    const match = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }
  async function postFeedback(div, rating, comment) {
    const res = await fetch("/api/feedback", {
      method: "POST", credentials: "same-origin",
      headers: token ? {"Content-Type": "application/json", "X-Twin-Token": token}
        : {"Content-Type": "application/json", "X-CSRFToken": csrfToken()},
      body: JSON.stringify({message_id: Number(div.dataset.messageId), rating, comment: comment || ""}),
    });
    return res.ok;
  }
  function addRating(div) {
    if (!div.dataset.messageId || div.querySelector(".rate")) return;
    const bar = meta(div, "rate");
    let rating = 0;
    const commentForm = document.createElement("form");
    commentForm.className = "comment";
    commentForm.hidden = true;
    const field = document.createElement("input");
    field.type = "text"; field.maxLength = 2000; field.placeholder = T["ui.comment"];
    field.setAttribute("aria-label", T["ui.comment"]);
    const submit = document.createElement("button");
    submit.type = "submit"; submit.textContent = T["ui.comment_send"];
    commentForm.append(field, submit);
    const thanks = document.createElement("span");
    thanks.className = "thanks"; thanks.setAttribute("role", "status");
    for (const [label, value] of [["ui.helpful", 1], ["ui.not_helpful", -1]]) {
      const b = document.createElement("button");
      b.type = "button"; b.textContent = T[label]; b.setAttribute("aria-pressed", "false");
      b.addEventListener("click", async () => {
        if (await postFeedback(div, value, field.value)) {
          rating = value;
          bar.querySelectorAll("button[aria-pressed]").forEach(x => x.setAttribute("aria-pressed", "false"));
          b.setAttribute("aria-pressed", "true");
          commentForm.hidden = false;
          thanks.textContent = T["ui.thanks"];
        }
      });
      bar.appendChild(b);
    }
    commentForm.addEventListener("submit", async (e) => {
      e.preventDefault();
      if (rating && await postFeedback(div, rating, field.value)) { commentForm.hidden = true; thanks.textContent = T["ui.thanks"]; }
    });
    bar.append(thanks, commentForm);
  }

  // --- answers already on the page (a reload) -------------------------------------------------
  document.querySelectorAll(".msg").forEach(div => {
    div.dataset.key = String(++keys);
    const raw = div.querySelector(".text").textContent;
    if (!div.classList.contains("assistant")) return;
    const links = [...div.querySelectorAll(".cites a")].map(a => ({title: a.textContent, url: a.getAttribute("href")}));
    div.querySelector(".cites")?.remove();
    finish(div, {answer: raw, citations: links, outcome: div.dataset.outcome || "", message_id: div.dataset.messageId});
  });

  // --- asking ---------------------------------------------------------------------------------
  document.querySelectorAll("button.starter").forEach(b => b.addEventListener("click", () => {
    input.value = b.textContent;
    form.requestSubmit();
  }));
  input.addEventListener("keydown", (e) => {  // Enter asks, Shift+Enter is a new line
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); form.requestSubmit(); }
  });
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text || !canAsk()) return;
    bubble("user").querySelector(".text").textContent = text;
    current = null;
    setBusy(true);
    input.value = "";
    input.focus();
    if (conversationId) socket.send(JSON.stringify({type: "ask", text}));
    else start(text);
  });

  // The first question: its conversation is made now, then the socket opens and asks it.
  function start(text) {
    starting = true;
    fetch(page.dataset.start, {method: "POST", credentials: "same-origin",
                               headers: embedded ? {} : {"X-CSRFToken": csrfToken()}})
      .then(async (r) => {
        const body = await r.json().catch(() => ({}));
        if (!r.ok || !body.conversation) throw body.error || {};
        return body;
      })
      .then((body) => {
        conversationId = body.conversation;
        if (body.token) keepToken(body.token);
        pending = text;
        setStatus(T["ui.connecting"]);
        connect();
      })
      .catch((error) => {
        errorBubble({code: error.code || "internal", message: error.message || T["error.internal"]});
        setBusy(false);
      })
      .finally(() => { starting = false; updateSend(); });
  }

  if (conversationId) {
    setStatus(T["ui.connecting"]);
    connect();
  } else {
    updateSend();
  }
})();
