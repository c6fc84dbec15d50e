// The board's page: plain JavaScript, no framework. One EventSource brings
// the session list (a reset) and every change after it; the open board is
// fetched once and then updated task by task, so a change costs one
// element, not a redraw of the list.
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const STATUSES = ['pending', 'inprogress', 'completed', 'deleted'];
  const LABELS = { pending: 'pending', inprogress: 'in progress', completed: 'completed', deleted: 'deleted' };

  // Timings the browser tests and the benchmark read.
  const timing = (window.__board = { ready: 0, listAt: 0, boardAt: 0, applies: [] });
  const afterPaint = (cb) => requestAnimationFrame(() => setTimeout(cb, 0));
  const recordApply = (kind, t0) => {
    const applied = performance.now();
    let frame = 0;
    requestAnimationFrame(() => {
      frame = performance.now();
      setTimeout(() => {
        timing.applies.push({ kind, received: t0, applied, frame, painted: performance.now() });
        if (timing.applies.length > 200) timing.applies.splice(0, 100);
      }, 0);
    });
  };

  // The token came in the URL. It is kept in this tab's sessionStorage
  // (which, unlike a cookie, no other port of this host can read) and
  // sent with each request; it leaves the address bar (and anything
  // copied from it).
  const query = new URLSearchParams(location.search);
  if (query.has('token')) {
    sessionStorage.setItem('token', query.get('token'));
    history.replaceState(null, '', location.pathname + location.hash);
  }
  const token = sessionStorage.getItem('token') || '';
  const noToken = 'no token: open the URL that `tasksessiond board` printed (it ends with ?token=…)';

  // ---- announcements for screen readers, coalesced so a burst is one.
  let announceTimer = 0, announceMsg = '', announceN = 0;
  function announce(msg) {
    announceMsg = msg;
    announceN++;
    if (announceTimer) return;
    announceTimer = setTimeout(() => {
      $('announce').textContent = announceN > 1 ? `${announceN} changes; last: ${announceMsg}` : announceMsg;
      announceTimer = 0;
      announceN = 0;
    }, 400);
  }

  // ---- helpers
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function meta(session) {
    let m = session.metadata;
    if (typeof m === 'string') {
      try { m = JSON.parse(m); } catch { m = null; }
    }
    return m && typeof m === 'object' ? m : {};
  }
  // host and binding, as the hosts' integrations record them in metadata.
  function hostOf(session) {
    const m = meta(session);
    const parts = [];
    for (const k of ['host', 'client']) if (typeof m[k] === 'string' && m[k]) { parts.push(m[k]); break; }
    for (const k of ['binding', 'directory', 'cwd', 'project']) if (typeof m[k] === 'string' && m[k]) { parts.push(m[k]); break; }
    return parts.join(' · ');
  }
  function countsText(c) {
    return `${c.total} task${c.total === 1 ? '' : 's'}: ${c.pending} pending, ${c.inprogress} in progress, ${c.completed} completed` +
      (c.deleted ? `, ${c.deleted} deleted` : '');
  }
  function progressOf(c) {
    const live = c.total - c.deleted;
    return live > 0 ? c.completed / live : 0;
  }
  function titleOf(s) { return s.title || `Session ${s.id}`; }
  function when(iso) {
    const d = new Date(iso);
    return isNaN(d) ? '' : d.toLocaleString();
  }
  // lowerBound finds where id goes in a sorted array.
  function lowerBound(arr, id) {
    let lo = 0, hi = arr.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (arr[mid] < id) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  // ---- the session list: one row per lineage, newest first.
  const list = { rows: new Map(), els: new Map(), order: [], byId: new Map() };
  const filter = { q: '', status: 'all' };

  function rowTime(row) { return Date.parse(row.started) || 0; }
  function rowBefore(a, b) { // a comes before b: newer first, then by key
    const ta = rowTime(a), tb = rowTime(b);
    return ta !== tb ? ta > tb : a.key < b.key;
  }
  function rowMatches(row) {
    if (filter.status === 'active' && row.head.status !== 'active') return false;
    if (filter.status === 'compacted' && row.compactions === 0) return false;
    if (!filter.q) return true;
    return row._hay.includes(filter.q);
  }
  function fillRow(li, row) {
    const s = row.head, c = s.counts;
    row._hay = [s.title, hostOf(s), ...row.lineage].join('\n').toLowerCase();
    li.dataset.key = row.key;
    li.dataset.head = s.id;
    li.dataset.status = s.status;
    const btn = el('button', 'srow-btn');
    btn.type = 'button';
    btn.dataset.open = s.id;
    const top = el('span', 'srow-top');
    top.append(el('span', 's-title', titleOf(s)));
    top.append(el('span', `badge badge-${s.status}`, s.status));
    if (row.compactions) {
      top.append(el('span', 'badge badge-lineage', `${row.compactions} compaction${row.compactions === 1 ? '' : 's'}`));
    }
    btn.append(top);
    const host = hostOf(s);
    btn.append(el('span', 's-sub', (host ? host + ' · ' : '') + s.id));
    const bar = el('span', 's-progress');
    const p = el('progress');
    p.max = 1;
    p.value = progressOf(c);
    p.setAttribute('aria-hidden', 'true');
    bar.append(p, el('span', 's-counts', countsText(c)));
    btn.append(bar);
    if (list.lineageOpen(row)) {
      btn.setAttribute('aria-current', 'true');
      li.classList.add('current');
    } else {
      li.classList.remove('current');
    }
    li.replaceChildren(btn);
    li.hidden = !rowMatches(row);
  }
  list.lineageOpen = (row) => board.id !== null && row.lineage.includes(board.id);

  function indexRow(row) {
    const old = list.rows.get(row.key);
    if (old) for (const id of old.lineage) list.byId.delete(id);
    list.rows.set(row.key, row);
    for (const id of row.lineage) list.byId.set(id, row.key);
  }
  function renderRows(rows) {
    list.rows.clear(); list.els.clear(); list.byId.clear();
    const frag = document.createDocumentFragment();
    list.order = rows.map((r) => r.key);
    for (const row of rows) {
      indexRow(row);
      const li = el('li', 'srow');
      fillRow(li, row);
      list.els.set(row.key, li);
      frag.append(li);
    }
    $('session-list').replaceChildren(frag);
    updateListCount();
  }
  function upsertRow(row) {
    indexRow(row);
    let li = list.els.get(row.key);
    if (li) {
      fillRow(li, row);
    } else {
      li = el('li', 'srow');
      fillRow(li, row);
      list.els.set(row.key, li);
      // Binary search for its place among the rows, newest first.
      let lo = 0, hi = list.order.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (rowBefore(list.rows.get(list.order[mid]), row)) lo = mid + 1; else hi = mid;
      }
      list.order.splice(lo, 0, row.key);
      const next = lo + 1 < list.order.length ? list.els.get(list.order[lo + 1]) : null;
      $('session-list').insertBefore(li, next);
    }
    updateListCount();
    if (board.id !== null && row.lineage.includes(board.id)) updateBoardMeta(row);
  }
  function updateListCount() {
    let shown = 0;
    for (const li of list.els.values()) if (!li.hidden) shown++;
    const total = list.els.size;
    $('session-count').textContent = shown === total ? `(${total})` : `(${shown} of ${total})`;
    $('no-sessions').hidden = total > 0;
  }
  function refilter() {
    filter.q = $('q').value.trim().toLowerCase();
    filter.status = $('status').value;
    for (const [key, li] of list.els) li.hidden = !rowMatches(list.rows.get(key));
    updateListCount();
  }
  function markCurrentRow() {
    for (const [key, li] of list.els) {
      const row = list.rows.get(key);
      const cur = list.lineageOpen(row);
      li.classList.toggle('current', cur);
      const btn = li.firstChild;
      if (btn) { if (cur) btn.setAttribute('aria-current', 'true'); else btn.removeAttribute('aria-current'); }
    }
  }

  // ---- the open board: one session's tasks in columns by status.
  const board = {
    id: null, session: null, tasks: new Map(), els: new Map(),
    order: { pending: [], inprogress: [], completed: [], deleted: [] },
    counts: { total: 0, pending: 0, inprogress: 0, completed: 0, deleted: 0 },
    shown: { pending: 0, inprogress: 0, completed: 0, deleted: 0 }, gen: 0,
    queue: null, loads: 0, showDeleted: false,
  };

  function taskEl(t) {
    const li = el('li', 'task');
    li.dataset.taskid = t.taskid;
    fillTask(li, t);
    return li;
  }
  function fillTask(li, t) {
    li.dataset.status = t.status;
    const head = el('p', 'task-head');
    head.append(el('span', 'tid', `#${t.taskid}`), ' ', el('span', 'subject', t.subject));
    if (t.description) li.replaceChildren(head, el('p', 'desc', t.description));
    else li.replaceChildren(head);
  }
  // A column shows a prefix of its tasks (by taskid) while a long board is
  // still being drawn: shown[st] elements, in order, are in the document.
  // A task outside the prefix is drawn by the chunks, from board.tasks.
  function insertTask(st, id) {
    const arr = board.order[st];
    const i = lowerBound(arr, id);
    arr.splice(i, 0, id);
    if (i < board.shown[st] || board.shown[st] === arr.length - 1) {
      let li = board.els.get(id);
      if (!li) {
        li = taskEl(board.tasks.get(id));
        board.els.set(id, li);
      }
      const next = i + 1 < arr.length ? board.els.get(arr[i + 1]) : null;
      $(`col-${st}`).insertBefore(li, next && next.isConnected ? next : null);
      board.shown[st]++;
    }
  }
  function dropTask(st, id) {
    const arr = board.order[st];
    const i = lowerBound(arr, id);
    if (arr[i] !== id) return;
    arr.splice(i, 1);
    if (i < board.shown[st]) {
      board.els.get(id)?.remove();
      board.shown[st]--;
    }
  }
  // drawChunk puts the next tasks of each column in, about 30 ms of work a
  // frame (the first frame 100 a column), so a board of 10,000 tasks shows
  // its first ones at once and the page answers while the rest are drawn.
  function drawChunk(gen, first) {
    if (gen !== board.gen) return; // another board was opened
    const t0 = performance.now(), budget = first ? 0 : 30;
    let left = false;
    do {
      left = false;
      for (const st of STATUSES) {
        const arr = board.order[st];
        const from = board.shown[st], to = Math.min(arr.length, from + 100);
        if (from === to) continue;
        const frag = document.createDocumentFragment();
        for (let i = from; i < to; i++) {
          const li = taskEl(board.tasks.get(arr[i]));
          board.els.set(arr[i], li);
          frag.append(li);
        }
        $(`col-${st}`).append(frag);
        board.shown[st] = to;
        left = left || to < arr.length;
      }
    } while (left && performance.now() - t0 < budget);
    if (left) requestAnimationFrame(() => drawChunk(gen));
    else afterPaint(() => { if (gen === board.gen) timing.complete = performance.now(); });
  }
  function renderBoard(data) {
    const s = data.session;
    board.gen++;
    board.id = s.id;
    board.session = s;
    board.lineage = data.lineage || [s.id];
    board.tasks = new Map();
    board.els = new Map();
    board.order = { pending: [], inprogress: [], completed: [], deleted: [] };
    board.shown = { pending: 0, inprogress: 0, completed: 0, deleted: 0 };
    board.counts = { total: 0, pending: 0, inprogress: 0, completed: 0, deleted: 0 };
    const tasks = data.tasks.slice().sort((a, b) => a.taskid - b.taskid);
    for (const t of tasks) {
      const st = STATUSES.includes(t.status) ? t.status : 'pending';
      board.tasks.set(t.taskid, t);
      board.order[st].push(t.taskid);
      board.counts[st]++;
      board.counts.total++;
    }
    for (const st of STATUSES) $(`col-${st}`).replaceChildren();
    timing.complete = 0;
    drawChunk(board.gen, true);
    $('board-h').textContent = titleOf(s);
    $('board-error').hidden = true;
    $('board').hidden = false;
    $('pick').hidden = true;
    updateCounts();
    updateBoardMeta(list.rows.get(list.byId.get(s.id)));
    markCurrentRow();
  }
  function updateBoardMeta(row) {
    const s = board.session;
    if (!s) return;
    const lineage = row ? row.lineage : board.lineage;
    const parts = [s.id, s.status];
    const host = hostOf(s);
    if (host) parts.push(host);
    if (lineage.length > 1) parts.push(`compacted ${lineage.length - 1}× (from ${lineage[0]})`);
    parts.push(`created ${when(s.createdAt)}`);
    $('board-meta').textContent = parts.join(' · ');
  }
  function updateCounts() {
    const c = board.counts;
    for (const st of STATUSES) document.querySelector(`[data-count="${st}"]`).textContent = c[st];
    $('board-bar').value = progressOf(c);
    $('board-progress-text').textContent = `${Math.round(progressOf(c) * 100)}% done · ${countsText(c)}`;
    $('toggle-deleted').textContent = `${board.showDeleted ? 'Hide' : 'Show'} deleted (${c.deleted})`;
  }
  function applyTask(t) {
    const old = board.tasks.get(t.taskid);
    const st = STATUSES.includes(t.status) ? t.status : 'pending';
    board.tasks.set(t.taskid, t);
    const drawn = board.els.get(t.taskid);
    if (drawn) fillTask(drawn, t);
    if (!old) {
      insertTask(st, t.taskid);
      board.counts[st]++;
      board.counts.total++;
    } else if (old.status !== st) {
      const from = STATUSES.includes(old.status) ? old.status : 'pending';
      dropTask(from, t.taskid);
      insertTask(st, t.taskid);
      board.counts[from]--;
      board.counts[st]++;
    }
    updateCounts();
    // Restart the highlight on the next frame: reading layout here to
    // restart it would lay out a long column on every change.
    const li = board.els.get(t.taskid);
    if (li && li.isConnected) {
      li.classList.remove('flash');
      requestAnimationFrame(() => li.classList.add('flash'));
    }
    announce(`Task #${t.taskid} ${old ? 'is now ' + LABELS[st] : 'created'}: ${t.subject}`);
  }

  async function loadBoard(id) {
    const n = ++board.loads;
    board.queue = [];
    let data;
    try {
      timing.fetchStart = performance.now();
      const res = await fetch(`api/board?id=${encodeURIComponent(id)}`, { cache: 'no-store', headers: { 'X-Board-Token': token } });
      data = await res.json().catch(() => ({ error: res.statusText }));
      timing.fetchEnd = performance.now();
      if (!res.ok) throw new Error(data.error || res.statusText);
    } catch (err) {
      if (n !== board.loads) return;
      board.queue = null;
      $('board').hidden = false;
      $('pick').hidden = true;
      $('board-error').textContent = `Cannot show session ${id}: ${err.message}`;
      $('board-error').hidden = false;
      return;
    }
    if (n !== board.loads) return; // a newer load is under way
    renderBoard(data);
    timing.rendered = performance.now();
    // The stream was open before the fetch: the changes that came during
    // it are full task states in commit order, so applying them over the
    // fetched list ends at the newest state.
    const queued = board.queue;
    board.queue = null;
    for (const ev of queued) boardEvent(ev.kind, ev.data);
    if (data.session.id !== id) history.replaceState(null, '', '#' + encodeURIComponent(data.session.id));
    if (data.session.status === 'compacted' && data.session.successorId) {
      follow(data.session.id, data.session.successorId);
      return;
    }
    if (!timing.boardAt) afterPaint(() => { timing.boardAt = performance.now(); maybeReady(); });
  }
  function follow(from, to) {
    announce(`Session ${from} was compacted; showing its successor ${to}`);
    history.replaceState(null, '', '#' + encodeURIComponent(to));
    loadBoard(to);
  }
  function boardEvent(kind, ev) {
    if (board.queue) { board.queue.push({ kind, data: ev }); return; }
    if (ev.sessionId !== board.id) return;
    if (kind === 'task' && ev.task) applyTask(ev.task);
    if (kind === 'compacted' && ev.successorId) follow(ev.sessionId, ev.successorId);
  }
  function openFromHash() {
    const id = decodeURIComponent(location.hash.slice(1));
    if (id) {
      loadBoard(id);
    } else {
      board.id = null;
      board.session = null;
      $('board').hidden = true;
      $('pick').hidden = false;
      markCurrentRow();
    }
  }
  function maybeReady() {
    if (timing.ready || !timing.listAt) return;
    if (location.hash.length > 1 && !timing.boardAt) return;
    timing.ready = performance.now();
    document.body.dataset.ready = '1';
  }

  // ---- the stream
  function setConn(state, text) {
    const c = $('conn');
    c.dataset.state = state;
    c.textContent = text;
  }
  function connect() {
    if (!token) {
      setConn('down', noToken);
      return;
    }
    const es = new EventSource(`events?token=${encodeURIComponent(token)}`);
    es.addEventListener('reset', (e) => {
      const d = JSON.parse(e.data);
      renderRows(d.rows);
      setConn(d.connected ? 'live' : 'down', d.connected ? 'live' : `daemon unreachable: ${d.message}`);
      if (!timing.listAt) afterPaint(() => { timing.listAt = performance.now(); maybeReady(); });
      // After a reconnect the open board may have missed changes: read it again.
      openFromHash();
    });
    es.addEventListener('daemon', (e) => {
      const d = JSON.parse(e.data);
      setConn(d.connected ? 'live' : 'down', d.connected ? 'live' : `daemon unreachable: ${d.message}`);
    });
    es.addEventListener('session', (e) => {
      const t0 = performance.now();
      upsertRow(JSON.parse(e.data));
      recordApply('session', t0);
    });
    es.addEventListener('task', (e) => {
      const t0 = performance.now();
      boardEvent('task', JSON.parse(e.data));
      recordApply('task', t0);
    });
    es.addEventListener('compacted', (e) => boardEvent('compacted', JSON.parse(e.data)));
    // EventSource reconnects by itself; say so meanwhile.
    es.addEventListener('error', () => setConn('connecting', 'reconnecting…'));
  }

  // ---- controls
  $('filters').addEventListener('submit', (e) => e.preventDefault());
  $('q').addEventListener('input', refilter);
  $('status').addEventListener('change', refilter);
  $('session-list').addEventListener('click', (e) => {
    const btn = e.target.closest('button[data-open]');
    if (btn) location.hash = encodeURIComponent(btn.dataset.open);
  });
  $('toggle-deleted').addEventListener('click', () => {
    board.showDeleted = !board.showDeleted;
    $('toggle-deleted').setAttribute('aria-pressed', String(board.showDeleted));
    $('col-deleted-wrap').hidden = !board.showDeleted;
    updateCounts();
  });
  window.addEventListener('hashchange', openFromHash);
  connect();
})();
