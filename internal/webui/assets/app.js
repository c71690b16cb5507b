// swmgr's web page: a client of the switch's REST API (/public/v1/...),
// authenticated by the session cookie its login sets, kept live by the
// change feed (/public/v1/events). Every value shown comes from the API
// and is put in the page as text (never parsed as HTML).
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const S = {
    csrf: '', user: '', role: '', rev: 0, feed: null,
    ports: new Map(), // name -> {cfg, state, id}
    lldp: new Map(), vlans: [], pending: null, tick: 0,
    selected: '', samples: [], poll: 0, hostPoll: 0, cand: null, rollbackTo: 0,
  };
  const SAMPLE_MS = 5000, SAMPLES = 60; // counters: five minutes

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const k of kids) e.append(k instanceof Node ? k : String(k));
    return e;
  }
  const clear = (e) => { while (e.firstChild) e.firstChild.remove(); return e; };
  function showError(msg) { const e = $('error'); e.textContent = msg; e.hidden = !msg; }

  async function api(method, path, body) {
    const opt = { method, headers: { Accept: 'application/json' }, credentials: 'same-origin' };
    if (S.csrf) opt.headers['X-CSRF-Token'] = S.csrf;
    if (body !== undefined) { opt.headers['Content-Type'] = 'application/json'; opt.body = JSON.stringify(body); }
    const r = await fetch(path.startsWith('/') ? path : '/public/v1/' + path, opt);
    const text = await r.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch (e) { /* not JSON */ }
    if (!r.ok) {
      if (r.status === 401 && S.user) loggedOut('Your session ended: log in again.');
      const err = new Error((data && data.Error && data.Error.Message) || (r.status + ' ' + r.statusText));
      err.status = r.status;
      throw err;
    }
    return data;
  }
  async function list(path) {
    let out = [], marker = 0;
    for (;;) {
      const d = await api('GET', path + (path.includes('?') ? '&' : '?') + 'CurrentMarker=' + marker + '&Count=1024');
      out = out.concat(d.Objects || []);
      if (!d.MoreExist) return out;
      marker = d.NextMarker;
    }
  }

  // Session.
  async function start() {
    try {
      const r = await fetch('/ui/session', { headers: { Accept: 'application/json' } });
      if (r.ok) return started(await r.json());
    } catch (e) { /* shown as the login form */ }
    showLogin('');
  }
  function showLogin(msg) {
    for (const id of ['nav', 'logout', 'banner', 'view-panel', 'view-history', 'view-log', 'stage']) $(id).hidden = true;
    $('who').textContent = '';
    $('login').hidden = false;
    $('login-error').textContent = msg;
    document.body.dataset.view = 'login';
  }
  function loggedOut(msg) {
    S.user = ''; S.csrf = '';
    if (S.feed) { S.feed.close(); S.feed = null; }
    stopPoll();
    clearInterval(S.hostPoll); S.hostPoll = 0;
    showLogin(msg);
  }
  $('login').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const body = new URLSearchParams(new FormData(ev.target));
    const r = await fetch('/ui/login', { method: 'POST', body, headers: { Accept: 'application/json' } });
    const d = await r.json().catch(() => null);
    if (!r.ok) { $('login-error').textContent = (d && d.Error && d.Error.Message) || 'login refused'; return; }
    ev.target.reset();
    started(d);
  });
  $('logout').addEventListener('click', async () => {
    try { await api('POST', '/ui/logout'); } catch (e) { /* logged out either way */ }
    loggedOut('Logged out.');
  });
  async function started(s) {
    S.user = s.User; S.csrf = s.CSRF; S.role = s.Role;
    document.body.classList.toggle('ro', s.Role === 'read-only');
    $('login').hidden = true;
    $('nav').hidden = false; $('logout').hidden = false;
    $('who').textContent = s.User + ' (' + s.Role + ')';
    try {
      await Promise.all([loadPorts(), loadSystem(), loadServices(), loadDrift()]);
    } catch (e) { showError(e.message); }
    openFeed();
    refreshPending();
    route();
    if (!S.hostPoll) S.hostPoll = setInterval(loadHostQuiet, HOST_MS);
  }

  // The change feed: one event per commit, from the revision the page read.
  function openFeed() {
    if (S.feed) S.feed.close();
    const es = new EventSource('/public/v1/events' + (S.rev ? '?since=' + S.rev : ''));
    es.addEventListener('open', () => { document.body.dataset.feed = 'open'; });
    es.addEventListener('commit', (ev) => onCommit(JSON.parse(ev.data)));
    es.addEventListener('state', (ev) => onState(JSON.parse(ev.data)));
    es.addEventListener('error', (ev) => {
      if (ev.data) {
        const d = JSON.parse(ev.data);
        if (d.Status === 401 || d.Status === 403) { es.close(); loggedOut(d.Message); return; }
        if (d.FirstMissing) loadPorts().catch((e) => showError(e.message));
      }
      if (es.readyState === EventSource.CLOSED) start(); // the session may have ended
    });
    S.feed = es;
  }
  // A port's link that went up or down comes as its state: the panel
  // takes it as is, and the commit that moved it (if one did: it follows)
  // need not read the port's state again.
  const fresh = new Map(); // port → when its state came on the feed
  function onState(ev) {
    if (ev.Kind === 'DriftState' && ev.Object) { renderDrift(ev.Object); return; }
    if (ev.Kind !== 'Port' || !ev.Object) return;
    const p = S.ports.get(ev.Object.IntfRef);
    if (!p) return;
    p.state = ev.Object;
    fresh.set(ev.Object.IntfRef, Date.now());
    renderPorts();
    if (lagOf(ev.Object.IntfRef)) readLAGsSoon(); // its LAG's bundle may have changed
  }
  async function onCommit(rec) {
    S.rev = Math.max(S.rev, rec.Revision);
    const kinds = new Set((rec.Changes || []).map((c) => c.Kind));
    const ports = (rec.Changes || []).filter((c) => c.Kind === 'Port');
    try {
      if (ports.length > 8) await loadPorts();
      else {
        for (const c of ports) {
          if (c.Op === 'delete') { S.ports.delete(c.Before.IntfRef); continue; }
          const had = S.ports.get(c.After.IntfRef);
          // A port set down has no link, whatever its state read says
          // later; any other change that can move the link has its state
          // read again (staleState: soon, not at once).
          let state = had ? had.state : {};
          if (c.After.AdminState === 'DOWN') state = Object.assign({}, state, { OperState: 'DOWN' });
          S.ports.set(c.After.IntfRef, { cfg: c.After, state, id: c.ObjectId });
          if ((!had || movesState(c)) && !(Date.now() - (fresh.get(c.After.IntfRef) || 0) < 2000)) staleState(c.After.IntfRef);
        }
        if (ports.length) renderPorts();
      }
      if (kinds.has('LaPortChannel')) { await loadLAGs(); renderPorts(); }
      if (kinds.has('Vlan')) { S.vlans = (await list('config/Vlans')).map((o) => o.Object); renderPorts(); }
      if (kinds.has('SystemParam')) await loadSystem();
      if (['NtpServer', 'BGPv4Neighbor', 'Tacacs', 'RadiusServer'].some((k) => kinds.has(k))) await loadServices();
    } catch (e) { showError(e.message); }
    const running = document.querySelector('#system [data-field="running"]');
    if (running) running.textContent = S.rev;
    // The pending confirmation is read once the feed is quiet: while a
    // commit awaits confirmation the server accepts no other change, so a
    // commit followed by another was not left pending; only the last of a
    // burst can be (and its rollback, when cancelled or timed out, is a
    // commit too). At 100 commits a second a page reads none until the
    // burst ends.
    pendingWhenQuiet();
    if (document.body.dataset.view === 'history') later(loadRevisions);
    if (document.body.dataset.view === 'log') later(loadLog);
  }
  // quiet: a function that runs fn once no call came for ms.
  function quiet(fn, ms) {
    let timer = 0;
    return () => { clearTimeout(timer); timer = setTimeout(fn, ms); };
  }
  const pendingWhenQuiet = quiet(refreshPending, 300);
  const queued = new Set();
  function later(fn) {
    if (queued.has(fn)) return;
    queued.add(fn);
    setTimeout(() => { queued.delete(fn); fn(); }, 500);
  }

  // throttle: a function that runs fn at once, or, within ms of its last
  // run, once when ms have passed: however often it is called.
  function throttle(fn, ms) {
    let due = 0, timer = 0;
    return () => {
      if (timer) return;
      timer = setTimeout(() => { due = Date.now() + ms; timer = 0; fn(); }, Math.max(0, due - Date.now()));
    };
  }
  // Port states to read again (their link may have moved): read at most
  // once a second (at once when none was read in the last second), so
  // that 20 pages at 100 admin-state commits a second ask about 20 times a
  // second, not 2000; more than eight waiting ports are one read of the
  // list (which costs the server about what eight single reads do), and
  // then, the ports churning, the next read waits 2 s: the lists the pages
  // read were most of what they cost the server. LLDP neighbours follow
  // links, but a neighbour is learnt tens of seconds after its link comes
  // up: read at most every 10 s.
  const stale = new Set();
  let statesTimer = 0, statesDue = 0;
  const readLLDPSoon = throttle(readLLDP, 10000);
  function staleState(name) {
    stale.add(name);
    if (!statesTimer) statesTimer = setTimeout(readStates, Math.max(0, statesDue - Date.now()));
  }
  async function readStates() {
    statesTimer = 0;
    const names = [...stale].filter((n) => S.ports.has(n));
    stale.clear();
    statesDue = Date.now() + (names.length > 8 ? 2000 : 1000);
    try {
      const states = names.length > 8 ? (await list('state/Ports')).map((o) => o.Object)
        : await Promise.all(names.map(async (n) => (await api('GET', 'state/Port/' + S.ports.get(n).id)).Object));
      for (const st of states) { const p = S.ports.get(st.IntfRef); if (p) p.state = st; }
      renderPorts();
      readLLDPSoon();
    } catch (e) { showError(e.message); }
  }
  async function readLLDP() {
    try { S.lldp = byName(await list('state/LLDPIntfs'), 'IntfRef'); renderPorts(); } catch (e) { showError(e.message); }
  }

  // movesState: a change of a port that can change its state (its link).
  const movesState = (c) => !c.Before || ['AdminState', 'Speed', 'BreakOutMode', 'Autoneg', 'Duplex', 'LoopbackMode'].some((f) => c.Before[f] !== c.After[f]);

  // Front panel.
  const byName = (objs, key) => new Map(objs.map((o) => [o.Object[key], o.Object]));
  async function loadPorts() {
    const [cfg, st, lldp, vlans] = await Promise.all([list('config/Ports'), list('state/Ports'), list('state/LLDPIntfs'), list('config/Vlans')]);
    const state = byName(st, 'IntfRef');
    S.ports = new Map(cfg.map((o) => [o.Object.IntfRef, { cfg: o.Object, state: state.get(o.Object.IntfRef) || {}, id: o.ObjectId }]));
    S.lldp = byName(lldp, 'IntfRef');
    S.vlans = vlans.map((o) => o.Object);
    await loadLAGs();
    const sys = await api('GET', 'state/SystemParam');
    S.rev = Math.max(S.rev, sys.Object.RunningRevision || 0);
    renderPorts();
  }
  // LAGs: their state (members up in the bundle), and which LAG each
  // member port is in.
  // The drift from the intent (docs/ztp.md): read at start, then from the
  // feed's DriftState events.
  async function loadDrift() {
    try { renderDrift((await api('GET', 'state/Drift')).Object); } catch (e) { /* no intent kind on this switch */ }
  }
  function renderDrift(d) {
    const p = $('drift'), ul = clear($('drift-objects'));
    if (!d || !d.Following) {
      p.textContent = 'No intent is followed.'; p.dataset.drift = 'none';
      return;
    }
    p.dataset.drift = d.InDrift ? 'drift' : 'in-line';
    p.textContent = d.InDrift
      ? d.Differences + ' object(s) differ from the intent since ' + new Date(d.Since).toLocaleString() + ' (checked at revision ' + d.CheckedRevision + ')'
      : 'The running configuration is the intent (checked at revision ' + d.CheckedRevision + ').';
    for (const line of d.Objects || []) ul.append(el('li', {}, line));
  }
  async function loadLAGs() {
    S.lags = (await list('state/LaPortChannels')).map((o) => o.Object);
  }
  const readLAGsSoon = throttle(async () => { try { await loadLAGs(); renderPorts(); } catch (e) { showError(e.message); } }, 1000);
  const lagOf = (name) => (S.lags || []).find((l) => (l.IntfRefList || []).includes(name));
  function vlansOf(name) {
    const out = [];
    for (const v of S.vlans) {
      for (const [f, val] of Object.entries(v)) {
        if (Array.isArray(val) && val.includes(name)) out.push(v.VlanId + (/untag/i.test(f) ? ' untagged' : ''));
      }
    }
    return out;
  }
  function neighbour(name) {
    const l = S.lldp.get(name);
    if (!l || !(l.PeerHostName || l.PeerMac)) return '';
    return (l.PeerHostName || l.PeerMac) + (l.PeerPort ? ' ' + l.PeerPort : '');
  }
  function portLabel(name, p) {
    const admin = (p.cfg.AdminState || '').toLowerCase(), oper = (p.state.OperState || 'unknown').toLowerCase();
    let s = name + ' admin ' + admin + ', oper ' + oper;
    const lag = lagOf(name);
    if (lag) s += ', member of ' + lag.IntfRef + ((lag.IntfRefListUpInBundle || []).includes(name) ? ' (in the bundle)' : ' (not in the bundle)');
    if (p.cfg.Speed) s += ', ' + (p.cfg.Speed / 1000) + 'G';
    if (p.cfg.Description) s += ', "' + p.cfg.Description + '"';
    const v = vlansOf(name);
    if (v.length) s += ', VLAN ' + v.join(', ');
    const n = neighbour(name);
    if (n) s += ', neighbour ' + n;
    return s;
  }
  function renderPorts() {
    const box = clear($('ports'));
    const names = [...S.ports.keys()].sort((a, b) => (S.ports.get(a).cfg.IfIndex || 0) - (S.ports.get(b).cfg.IfIndex || 0) || a.localeCompare(b));
    for (const name of names) {
      const p = S.ports.get(name);
      const admin = (p.cfg.AdminState || '').toLowerCase(), oper = (p.state.OperState || 'unknown').toLowerCase();
      const label = portLabel(name, p);
      const b = el('button', {
        type: 'button', class: 'port admin-' + admin + ' oper-' + oper + (/^fpPort\d+$/.test(name) ? '' : ' sub') + (name === S.selected ? ' selected' : ''),
        'data-port': name, 'data-admin': p.cfg.AdminState || '', 'data-oper': p.state.OperState || '', title: label, 'aria-label': label,
        onclick: () => { location.hash = '#port/' + name; },
      }, el('span', {}, name.replace(/^fpPort/, '')), el('span', { class: 'state' }, admin === 'up' ? oper : 'off'));
      const lag = lagOf(name);
      if (lag) { b.dataset.lag = lag.IntfRef; b.append(el('span', { class: 'lag' }, lag.IntfRef.replace(/^PortChannel/, 'Po'))); }
      box.append(b);
    }
    const lags = clear($('lags'));
    for (const l of S.lags || []) {
      const up = (l.OperState || '').toUpperCase() === 'UP';
      const label = l.IntfRef + ' ' + (up ? 'up' : 'down') + ': members ' + (l.IntfRefList || []).join(', ') + '; in the bundle ' + ((l.IntfRefListUpInBundle || []).join(', ') || 'none');
      lags.append(el('li', { class: up ? 'lag-up' : 'lag-down', 'data-lag': l.IntfRef, title: label }, label));
    }
    $('lags').hidden = !(S.lags || []).length;
    document.body.dataset.ports = String(names.length);
    if (names.length && !performance.getEntriesByName('panel-painted').length) performance.mark('panel-painted');
    if (S.selected) renderPortDetail();
  }

  // A port's detail: its fields, its counters as rates, its edit form.
  function showPort(name) {
    if (S.selected !== name) { S.samples = []; stopPoll(); }
    S.selected = name;
    $('port').hidden = false;
    renderPorts();
    const p = S.ports.get(name);
    if (p) {
      const f = $('port-edit');
      f.elements.AdminState.value = p.cfg.AdminState; f.elements.Description.value = p.cfg.Description || ''; f.elements.Mtu.value = p.cfg.Mtu || '';
    }
    if (!S.poll) { sample(); S.poll = setInterval(sample, SAMPLE_MS); }
  }
  function stopPoll() { if (S.poll) clearInterval(S.poll); S.poll = 0; }
  async function sample() {
    const p = S.ports.get(S.selected);
    if (!p) return;
    try {
      const st = (await api('GET', 'state/Port/' + p.id)).Object;
      p.state = st;
      S.samples.push({ t: Date.now(), inB: st.IfInOctets, outB: st.IfOutOctets, inP: st.IfInUcastPkts, outP: st.IfOutUcastPkts, err: st.IfInErrors + st.IfOutErrors });
      if (S.samples.length > SAMPLES + 1) S.samples.shift();
      renderPortDetail();
    } catch (e) { showError(e.message); }
  }
  function renderPortDetail() {
    const name = S.selected, p = S.ports.get(name);
    if (!p) return;
    $('port-title').textContent = portLabel(name, p);
    const dl = clear($('port-fields'));
    const fields = [['Admin state', p.cfg.AdminState], ['Oper state', p.state.OperState], ['Speed', p.cfg.Speed ? p.cfg.Speed + ' Mb/s' : ''],
      ['Description', p.cfg.Description], ['MTU', p.cfg.Mtu], ['Breakout', p.cfg.BreakOutMode], ['Media', p.cfg.MediaType],
      ['VLANs', vlansOf(name).join(', ') || 'none'], ['LLDP neighbour', neighbour(name) || 'none'],
      ['In octets', p.state.IfInOctets], ['Out octets', p.state.IfOutOctets], ['Errors', (p.state.IfInErrors || 0) + (p.state.IfOutErrors || 0)]];
    for (const [k, v] of fields) dl.append(el('dt', {}, k), el('dd', {}, v === undefined ? '' : v));
    const g = clear($('port-graphs'));
    for (const [key, what] of [['inB', 'in, bit/s'], ['outB', 'out, bit/s'], ['inP', 'in, packets/s'], ['outP', 'out, packets/s']]) {
      g.append(graph(key, what, key.endsWith('B') ? 8 : 1));
    }
  }
  function graph(key, what, scale) {
    const rates = [];
    for (let i = 1; i < S.samples.length; i++) {
      const a = S.samples[i - 1], b = S.samples[i];
      rates.push(Math.max(0, (b[key] - a[key]) * scale * 1000 / Math.max(1, b.t - a.t)));
    }
    const maxv = Math.max(1, ...rates), last = rates.length ? rates[rates.length - 1] : 0;
    const ns = 'http://www.w3.org/2000/svg';
    const svg = document.createElementNS(ns, 'svg');
    svg.setAttribute('viewBox', '0 0 ' + SAMPLES + ' 40');
    svg.setAttribute('preserveAspectRatio', 'none');
    const line = document.createElementNS(ns, 'polyline');
    line.setAttribute('points', rates.map((r, i) => (SAMPLES - rates.length + i + 1) + ',' + (40 - 38 * r / maxv)).join(' '));
    svg.append(line);
    const text = what + ': ' + Math.round(last) + ' (max ' + Math.round(maxv) + ' over ' + Math.round(rates.length * SAMPLE_MS / 1000) + ' s)';
    svg.setAttribute('role', 'img'); svg.setAttribute('aria-label', text);
    return el('figure', { class: 'graph' }, svg, el('figcaption', {}, text));
  }
  $('port-edit').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const f = ev.target.elements, body = { AdminState: f.AdminState.value, Description: f.Description.value };
    if (f.Mtu.value) body.Mtu = Number(f.Mtu.value);
    stage([{ Method: 'PATCH', Path: 'config/Port?IntfRef=' + encodeURIComponent(S.selected), Body: body }], 'Change ' + S.selected);
  });

  // System and services.
  async function loadSystem() {
    const [sys, ver] = await Promise.all([api('GET', 'state/SystemParam'), api('GET', 'state/SystemSwVersion')]);
    const o = sys.Object, dl = clear($('system'));
    $('title').textContent = 'swmgr: ' + o.Hostname;
    for (const [k, v, f] of [['Host name', o.Hostname], ['Version', ver.Object.FlexswitchVersion], ['Up', o.UpTime], ['System', o.Distro + ', ' + o.Kernel],
      ['Running revision', Math.max(S.rev, o.RunningRevision), 'running'], ['Saved revision', o.SavedRevision + (o.UnsavedChanges ? ' (unsaved changes)' : '')]]) {
      dl.append(el('dt', {}, k), el('dd', f ? { 'data-field': f } : {}, v === undefined ? '' : v));
    }
    dl.append(el('dt', {}, 'CPU'), el('dd', { 'data-field': 'cpu' }, ''), el('dt', {}, 'Memory'), el('dd', { 'data-field': 'memory' }, ''));
    await loadHost();
  }
  // The host's CPU and memory (SystemStatus): not in the feed (nothing is
  // committed when they move), so read every HOST_MS while the front
  // panel is shown in a visible tab, and at once when it is shown again.
  const HOST_MS = 5000;
  async function loadHost() {
    const cpu = document.querySelector('#system [data-field="cpu"]'), mem = document.querySelector('#system [data-field="memory"]');
    if (!cpu || !S.user || document.hidden || document.body.dataset.view !== 'panel') return;
    const o = (await api('GET', 'state/SystemStatus')).Object, at = new Date().toLocaleTimeString();
    cpu.textContent = o.CpuUtilization + ' %';
    mem.textContent = bytes(o.MemoryUsed) + ' used of ' + bytes(o.MemoryTotal) + ' (' + Math.round(100 * o.MemoryUsed / o.MemoryTotal) + ' %)';
    cpu.title = mem.title = 'read at ' + at;
  }
  // bytes: a size in binary units with one decimal (1.5 GiB).
  function bytes(n) {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(1) : n) + ' ' + units[i];
  }
  const loadHostQuiet = () => loadHost().catch((e) => showError(e.message));
  document.addEventListener('visibilitychange', loadHostQuiet);
  const stateOf = (o) => ['SessionState', 'State', 'Status', 'OperState', 'Reachable'].map((f) => o[f]).find((v) => v !== undefined && v !== '');
  function table(id, rows, head, extra) {
    const t = clear($(id));
    t.append(el('tr', {}, ...head.map((h) => el('th', {}, h))));
    for (const r of rows) t.append(el('tr', {}, ...r.cells.map((c) => el('td', {}, c === undefined ? '' : c)), extra ? el('td', {}, extra(r)) : ''));
    if (!rows.length) t.append(el('tr', {}, el('td', { colspan: head.length }, 'none')));
  }
  async function loadServices() {
    const [bgp, ntp, tac, rad] = await Promise.all([list('state/BGPv4Neighbors'), list('state/NtpServers'), list('state/Tacacss'), list('state/RadiusServers')]);
    table('bgp', bgp.map((o) => ({ cells: [o.Object.NeighborAddress, o.Object.PeerAS, stateOf(o.Object)] })), ['Neighbour', 'AS', 'State']);
    table('ntp', ntp.map((o) => ({ id: o.ObjectId, cells: [o.Object.IpAddr, stateOf(o.Object)] })), ['Server', 'State', ''],
      (r) => el('button', { type: 'button', class: 'edit', onclick: () => stage([{ Method: 'DELETE', Path: 'config/NtpServer/' + r.id }], 'Remove NTP server ' + r.cells[0]) }, 'Remove…'));
    table('aaa', tac.concat(rad).map((o) => ({ cells: [o.Object.ServerIp || o.Object.Address || o.Object.IpAddr || '', stateOf(o.Object)] })), ['Server', 'Reachability']);
  }
  $('ntp-add').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const ip = ev.target.elements.IpAddr.value.trim();
    stage([{ Method: 'POST', Path: 'config/NtpServer', Body: { IpAddr: ip } }], 'Add NTP server ' + ip);
  });

  // Changes: staged in a candidate, previewed as its diff, then committed.
  async function stage(edits, title) {
    showError('');
    try {
      const c = await api('POST', 'candidates', { Comment: title });
      S.cand = c.CandidateId; S.rollbackTo = 0;
      try {
        await api('POST', 'candidates/' + S.cand + '/edits', { Edits: edits });
      } catch (e) { await discard(); throw e; }
      const d = await api('GET', 'candidates/' + S.cand + '/diff');
      openStage(title, d.Changes, true);
    } catch (e) { showError(e.message); }
  }
  function openStage(title, changes, confirmable) {
    $('stage-title').textContent = title;
    const box = clear($('stage-diff'));
    box.append(renderChanges(changes));
    const f = $('stage-form');
    f.elements.Comment.value = title;
    f.elements.Confirm.value = '';
    f.elements.Confirm.parentElement.hidden = !confirmable;
    $('stage').hidden = false;
  }
  async function discard() {
    if (S.cand) await api('DELETE', 'candidates/' + S.cand).catch(() => {});
    S.cand = null; S.rollbackTo = 0;
    $('stage').hidden = true;
  }
  $('stage-discard').addEventListener('click', discard);
  $('stage-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const f = ev.target.elements;
    try {
      if (S.rollbackTo) {
        await api('POST', 'action/Rollback', { Revision: S.rollbackTo });
      } else {
        const body = { Comment: f.Comment.value };
        if (f.Confirm.value) body.Confirm = Number(f.Confirm.value);
        await api('POST', 'candidates/' + S.cand + '/commit', body);
      }
      S.cand = null; S.rollbackTo = 0;
      $('stage').hidden = true;
      showError('');
    } catch (e) { showError(e.message); }
  });

  function renderChanges(changes) {
    const box = el('div', { class: 'diff' });
    if (!changes || !changes.length) { box.append(el('p', {}, 'No change.')); return box; }
    for (const c of changes) {
      const before = c.Before || {}, after = c.After || {};
      const keys = [...new Set(Object.keys(before).concat(Object.keys(after)))]
        .filter((k) => c.Op !== 'update' || JSON.stringify(before[k]) !== JSON.stringify(after[k]));
      const t = el('table', {}, el('tr', {}, el('th', {}, 'Field'), el('th', {}, 'Before'), el('th', {}, 'After')));
      for (const k of keys) {
        t.append(el('tr', {}, el('td', {}, k), el('td', { class: 'before' }, k in before ? JSON.stringify(before[k]) : ''), el('td', { class: 'after' }, k in after ? JSON.stringify(after[k]) : '')));
      }
      box.append(el('p', { class: 'change' }, el('span', { class: 'op' }, c.Op), ' ' + c.Kind + ' ' + c.Key), t);
    }
    return box;
  }

  // Commit history.
  async function loadRevisions() {
    try {
      const d = await api('GET', 'revisions?Count=100');
      const body = clear($('revs').tBodies[0]);
      for (const o of d.Objects || []) {
        const r = o.Object;
        body.append(el('tr', { 'data-revision': r.Revision, 'data-source': r.Source },
          el('td', {}, r.Revision), el('td', {}, new Date(r.Time).toLocaleString()), el('td', {}, r.User || ''), el('td', {}, r.Source),
          el('td', {}, r.Comment || ''), el('td', {}, (r.Changes || []).length),
          el('td', {},
            el('button', { type: 'button', onclick: () => showDiff(r.Revision, 'parent') }, 'Diff'), ' ',
            el('button', { type: 'button', class: 'edit rollback', onclick: () => previewRollback(r.Revision) }, 'Roll back to here…'))));
      }
      labelCells($('revs'));
    } catch (e) { showError(e.message); }
  }
  // against: 'parent', 'running', or another revision's number (the
  // server composes the records between them: GET revisions/<a>/diff/<b>).
  async function showDiff(rev, against) {
    const box = clear($('diff'));
    try {
      let changes, what;
      if (typeof against === 'number') {
        changes = (await api('GET', 'revisions/' + rev + '/diff/' + against)).Changes;
        what = 'What changed from revision ' + rev + ' to revision ' + against;
      } else if (against === 'running') {
        changes = (await api('POST', 'action/Rollback?dry_run=true', { Revision: rev })).Changes;
        what = 'What would change from the running configuration back to revision ' + rev;
      } else {
        changes = (await api('GET', 'revisions/' + rev)).Changes;
        what = 'Revision ' + rev + ' against its parent';
      }
      box.append(el('h3', {}, what), renderChanges(changes));
    } catch (e) { showError(e.message); }
  }
  $('cmp-b').addEventListener('change', () => { $('cmp-to').hidden = $('cmp-b').value !== 'revision'; });
  $('cmp-go').addEventListener('click', () => {
    const a = Number($('cmp-a').value), b = $('cmp-b').value, to = Number($('cmp-to').value);
    if (a > 0 && (b !== 'revision' || to > 0)) showDiff(a, b === 'revision' ? to : b);
  });
  async function previewRollback(rev) {
    try {
      const d = await api('POST', 'action/Rollback?dry_run=true', { Revision: rev });
      S.cand = null;
      openStage('Roll back to revision ' + rev, d.Changes, false);
      S.rollbackTo = rev;
    } catch (e) { showError(e.message); }
  }

  // A commit awaiting confirmation: its banner counts down.
  async function refreshPending() {
    try {
      const p = await api('GET', 'revisions/pending');
      S.pending = p.Awaiting ? { rev: p.Revision, user: p.User, comment: p.Comment, deadline: Date.now() + p.SecondsLeft * 1000 } : null;
    } catch (e) { S.pending = null; }
    renderBanner();
    if (S.pending && !S.tick) S.tick = setInterval(renderBanner, 1000);
    if (!S.pending && S.tick) { clearInterval(S.tick); S.tick = 0; }
  }
  function renderBanner() {
    const p = S.pending;
    $('banner').hidden = !p;
    if (!p) return;
    const left = Math.max(0, Math.ceil((p.deadline - Date.now()) / 1000));
    $('banner').dataset.revision = p.rev;
    $('banner-text').textContent = 'Revision ' + p.rev + ' by ' + (p.user || 'someone') + (p.comment ? ' ("' + p.comment + '")' : '') +
      ' awaits confirmation: rolled back in ' + left + ' s unless confirmed.';
  }
  // Confirm keeps the pending commit, Cancel rolls it back now; who may
  // decide is the server's to say (a 403 shows as an error).
  for (const [id, decision] of [['banner-confirm', 'confirm'], ['banner-cancel', 'cancel']]) {
    $(id).addEventListener('click', async () => {
      if (!S.pending) return;
      try { await api('POST', 'revisions/' + S.pending.rev + '/' + decision); refreshPending(); } catch (e) { showError(e.message); }
    });
  }

  // Config log.
  let logRows = [];
  async function loadLog() {
    try {
      const d = await api('GET', 'state/ConfigLogs?Count=1024');
      logRows = (d.Objects || []).map((o) => o.Object).reverse();
      renderLog();
    } catch (e) { showError(e.message); }
  }
  function renderLog() {
    const q = $('log-filter').value.trim().toLowerCase(), body = clear($('logtable').tBodies[0]);
    for (const r of logRows) {
      const cells = [r.SeqNum, r.Time, r.UserName, r.API, r.Operation, r.Result, r.Data];
      if (q && !cells.join(' ').toLowerCase().includes(q)) continue;
      body.append(el('tr', {}, ...cells.map((c) => el('td', {}, c === undefined ? '' : c))));
    }
    labelCells($('logtable'));
  }
  // labelCells gives each cell of a table's body its column's heading
  // (data-label): a phone shows the rows as cards, each value labelled.
  function labelCells(table) {
    const heads = [...table.tHead.rows[0].cells].map((th) => th.textContent);
    for (const row of table.tBodies[0].rows) {
      [...row.cells].forEach((td, i) => { if (heads[i]) td.dataset.label = heads[i]; });
    }
  }
  $('log-filter').addEventListener('input', renderLog);

  // Views, by the address's fragment.
  function route() {
    if (!S.user) return;
    const h = location.hash.slice(1) || 'panel';
    const view = h.startsWith('port/') ? 'panel' : h;
    for (const v of ['panel', 'history', 'log']) {
      $('view-' + v).hidden = v !== view;
      $('nav-' + v).classList.toggle('current', v === view);
    }
    document.body.dataset.view = view;
    if (h.startsWith('port/')) showPort(h.slice(5));
    else { S.selected = ''; $('port').hidden = true; stopPoll(); if (view === 'panel') renderPorts(); }
    if (view === 'panel') loadHostQuiet();
    if (view === 'history') loadRevisions();
    if (view === 'log') loadLog();
  }
  window.addEventListener('hashchange', route);
  start();
})();
