// karta web view: the workload list (virtualised), the workload page, live updates (server-sent
// events). Plain JavaScript, no dependencies. Cluster text is hostile input: it only ever reaches
// the page through textContent and attribute values (el() below), never as HTML.
"use strict";

const ROW_HEIGHT = 32; // px; matches --row in app.css (2rem at 16px is close; measured below)
const OVERSCAN = 10; // rows drawn above and below the visible ones
const PAGE = 1000;

const state = {
  rows: new Map(), // id -> row
  view: [], // rows after filters and sort
  seq: 0,
  sort: "age",
  desc: false,
  filters: { namespace: "", kind: "", status: "", text: "", gpu: "", gang: "", general: false },
  opened: null, // the id of the row last opened: focused again on the way back
  focusIndex: 0, // the row Tab lands on (one row in the tab order; the arrows move it)
  source: null,
  detailId: null,
  detailTimer: null,
  renderQueued: false,
  loadedAt: 0,
  rowHeight: ROW_HEIGHT,
  drawn: null, // {first, last}: the rows in the DOM
};
window.kartaUi = state; // for tests and curious users: read-only use

// -- DOM helpers -------------------------------------------------------------------------------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = String(value);
    else node.setAttribute(key, String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const $ = (id) => document.getElementById(id);

function age(created) {
  if (!created) return "";
  const seconds = Math.max(0, (Date.now() - Date.parse(created)) / 1000);
  if (!Number.isFinite(seconds)) return "";
  if (seconds < 120) return `${Math.floor(seconds)}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172800) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86400)}d`;
}

// The list's gang cell: a small bar of the pods bound against the minimum, then the short words;
// the whole sentence in the title. The texts are the server's (karta.ui.rows.gang_cell).
function gangCell(row) {
  const cell = row.cells.gang;
  const text = el("span", { text: cell.text });
  if (!cell.meter) return [text];
  const gang = row.gang;
  return [meter(gang.scheduled, gang.minMember, gang.minimumMet, `${gang.scheduled} of ${gang.minMember} bound`, "mini"), text];
}

// A bar of value against whole (role img, its words in aria-label): full and green when met.
function meter(value, whole, met, label, size) {
  const track = el("span", { class: `meter ${size || ""} ${met ? "met" : "unmet"}`, role: "img", "aria-label": label, title: label });
  const fill = el("span", { class: "fill" });
  fill.style.width = `${whole > 0 ? Math.min(100, Math.max(0, (value / whole) * 100)) : 0}%`;
  track.append(fill);
  return track;
}

// The queue state in words (kli describe's Queue: line): queue, ClusterQueue, state, why it waits.
function queueText(queue) {
  const where = `${queue.queue || "<no queue label>"}${queue.clusterQueue ? ` (ClusterQueue ${queue.clusterQueue})` : ""}`;
  const why = [queue.reason, queue.message].filter((part) => part).join(": ");
  const at = queue.position && queue.position.text ? `, ${queue.position.text}` : "";
  return `${where}: ${queue.state}${at}${why ? ` (${why})` : ""}${queue.workload ? `, workload ${queue.workload}` : ""}`;
}

async function getJSON(url) {
  const response = await fetch(url, { headers: { Accept: "application/json" } });
  const body = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
  if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
  return body;
}

function setLive(text, on) {
  const live = $("live");
  live.textContent = text;
  live.className = on ? "live on" : "live off";
}

// -- loading and live updates ------------------------------------------------------------------

async function loadAll() {
  const started = performance.now();
  let rows = new Map();
  let seq = 0;
  for (let attempt = 0; attempt < 3; attempt++) {
    // paged by name; a change between two pages may shift a row across them, so a load during
    // which the store changed is done again (the change stream brings whatever changes after)
    rows = new Map();
    let offset = 0;
    let last = 0;
    for (;;) {
      const page = await getJSON(`/api/workloads?limit=${PAGE}&offset=${offset}&sort=name`);
      if (offset === 0) seq = page.seq;
      last = page.seq;
      for (const row of page.items) rows.set(row.id, row);
      offset += page.items.length;
      if (page.items.length === 0 || offset >= page.total) break;
    }
    if (last === seq) break;
  }
  state.rows = rows;
  state.seq = seq;
  await loadFacets();
  refresh();
  state.loadedAt = performance.now() - started;
  document.body.dataset.loaded = "true";
  document.body.dataset.loadMs = String(Math.round(state.loadedAt));
  connect();
}

async function loadFacets() {
  const facets = await getJSON("/api/facets");
  fillSelect($("f-namespace"), facets.namespaces, state.filters.namespace);
  fillSelect($("f-kind"), facets.kinds, state.filters.kind);
  fillSelect($("f-status"), facets.statuses, state.filters.status);
  $("queues-link").hidden = !facets.kueue;
  $("capacity-link").hidden = !facets.capacity;
  const warnings = $("warnings");
  const said = facets.clusters.flatMap((c) => c.warnings.map((w) => (facets.clusters.length > 1 ? `${c.name}: ${w}` : w)));
  warnings.replaceChildren(...said.slice(0, 20).map((w) => el("p", { text: w })));
  warnings.hidden = said.length === 0;
  const syncing = facets.clusters.filter((c) => !c.synced).map((c) => c.name);
  document.body.dataset.synced = syncing.length === 0 ? "true" : "false";
}

function fillSelect(select, values, chosen) {
  const options = [el("option", { value: "", text: "all" })];
  const all = new Set(values);
  if (chosen) all.add(chosen);
  for (const value of [...all].sort()) {
    options.push(el("option", { value, text: value || "(cluster-scoped)", selected: value === chosen ? "selected" : null }));
  }
  select.replaceChildren(...options);
  select.value = chosen;
}

let facetsTimer = null;

function connect() {
  if (state.source) state.source.close();
  const source = new EventSource(`/api/stream?since=${state.seq}`);
  state.source = source;
  source.addEventListener("open", () => setLive("live", true));
  source.addEventListener("change", (message) => {
    const change = JSON.parse(message.data);
    for (const row of change.upserts) state.rows.set(row.id, row);
    for (const id of change.deletes) state.rows.delete(id);
    state.seq = change.seq;
    document.body.dataset.seq = String(change.seq);
    scheduleRefresh();
    if (!facetsTimer) facetsTimer = setTimeout(() => { facetsTimer = null; loadFacets().catch(() => {}); }, 1000);
    if (state.detailId && (change.upserts.some((r) => r.id === state.detailId) || change.deletes.includes(state.detailId))) {
      scheduleDetail();
    }
  });
  source.addEventListener("reset", () => {
    source.close();
    state.source = null;
    loadAll().catch(showLoadError);
  });
  source.addEventListener("error", () => {
    setLive("reconnecting…", false);
  });
}

function showLoadError(error) {
  setLive(`cannot load: ${error.message}`, false);
  setTimeout(() => loadAll().catch(showLoadError), 3000);
}

// -- the list ----------------------------------------------------------------------------------

const SORTS = {
  name: (r) => r.name,
  namespace: (r) => r.namespace,
  kind: (r) => r.kind,
  status: (r) => r.status,
  pods: (r) => r.pods.ready * 1e6 + r.pods.total,
  gpus: (r) => r.gpus,
  age: (r) => -(Date.parse(r.createdAt) || 0),
  gang: (r) => (r.gang ? (r.gang.minimumMet ? 2 : 1) : 0),
  queue: (r) => (r.queue ? r.queue.text : ""),
};

// The library decides what an AI workload is (row.ai: karta.ui.rows.is_ai_row); the page only
// hides the others until asked, and never counts them while they are hidden.
function matches(row) {
  const f = state.filters;
  if (!f.general && !row.ai) return false;
  if (f.gpu && (row.gpus > 0) !== (f.gpu === "yes")) return false;
  if (f.gang === "no" && row.gang) return false;
  if (f.gang && f.gang !== "no") {
    if (!row.gang) return false;
    if (f.gang !== "yes" && row.gang.minimumMet !== (f.gang === "met")) return false;
  }
  if (f.namespace && row.namespace !== f.namespace) return false;
  if (f.kind && row.kind !== f.kind) return false;
  if (f.status && !row.phases.includes(f.status)) return false;
  if (f.text) {
    const hay = `${row.name} ${row.namespace} ${row.kind} ${row.status} ${row.definition}`.toLowerCase();
    if (!hay.includes(f.text)) return false;
  }
  return true;
}

function refresh() {
  const key = SORTS[state.sort];
  const view = [];
  for (const row of state.rows.values()) if (matches(row)) view.push(row);
  const sign = state.desc ? -1 : 1;
  view.sort((a, b) => {
    const x = key(a);
    const y = key(b);
    if (x < y) return -sign;
    if (x > y) return sign;
    return a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  });
  state.view = view;
  // the Queue column only when a row shown has a queue (Kueue manages it)
  $("rows").classList.toggle("no-queue", !view.some((r) => r.queue));
  let shown = state.rows.size;
  if (!state.filters.general) {
    shown = 0;
    for (const row of state.rows.values()) if (row.ai) shown++;
  }
  const what = state.filters.general ? "workloads" : "AI workloads";
  $("count").textContent = `${view.length} of ${shown} ${what}`;
  const empty = $("empty");
  empty.hidden = view.length > 0 || state.rows.size === 0;
  empty.textContent = state.filters.general ? "No workload matches the filters." : "No AI workload matches the filters; general-purpose workloads are hidden (tick the box above to show them).";
  $("rows").setAttribute("aria-rowcount", String(view.length + 1));
  for (const th of document.querySelectorAll("#rows th[data-sort]")) {
    th.setAttribute("aria-sort", th.dataset.sort === state.sort ? (state.desc ? "descending" : "ascending") : "none");
  }
  renderWindow();
}

function scheduleRefresh() {
  if (state.renderQueued) return;
  state.renderQueued = true;
  requestAnimationFrame(() => {
    state.renderQueued = false;
    refresh();
  });
}

function renderWindow(force = true) {
  const scroller = $("scroller");
  const height = state.rowHeight;
  const top = Math.floor(scroller.scrollTop / height);
  const visible = Math.ceil(scroller.clientHeight / height) + 1;
  const drawn = state.drawn;
  if (!force && drawn && top >= drawn.first && Math.min(state.view.length, top + visible) <= drawn.last) {
    return; // a scroll within the rows already drawn: nothing to do
  }
  const first = Math.max(0, top - OVERSCAN);
  const last = Math.min(state.view.length, top + visible + OVERSCAN);
  state.drawn = { first, last };
  const body = $("body");
  const rows = [];
  rows.push(spacer(first * height));
  const tabbable = state.focusIndex >= first && state.focusIndex < last ? state.focusIndex : first;
  for (let i = first; i < last; i++) rows.push(rowElement(state.view[i], i, i === tabbable));
  rows.push(spacer((state.view.length - last) * height));
  body.replaceChildren(...rows);
  const sample = body.children[1];
  if (sample && sample.offsetHeight && Math.abs(sample.offsetHeight - height) > 1) {
    state.rowHeight = sample.offsetHeight; // the real row height: re-render with it
    renderWindow();
  }
}

function spacer(px) {
  const tr = el("tr", { class: "spacer", "aria-hidden": "true" }, el("td", { colspan: 10 }));
  tr.firstChild.style.height = `${px}px`;
  return tr;
}

function rowElement(row, index, tabbable) {
  const link = el("a", { href: `#/workload/${encodeURIComponent(row.id)}`, title: row.name, text: row.name });
  const pods = `${row.pods.ready}/${row.pods.desired || row.pods.total}`;
  const status = el("td", { class: `status s-${row.status}`, title: row.phases.join(", "), text: row.error ? "Error" : row.status });
  return el(
    "tr",
    { "aria-rowindex": index + 2, "data-id": row.id, "data-index": index, tabindex: tabbable ? "0" : "-1" },
    el("td", { text: row.kind, title: row.apiVersion }),
    el("td", { text: row.namespace, title: row.namespace }),
    el("td", {}, link),
    status,
    el("td", { text: row.cells.components.text, title: row.error || row.cells.components.title }),
    el("td", { class: "num", text: pods, title: `${row.pods.ready} ready, ${row.pods.total} pods, ${row.pods.desired} desired` }),
    el("td", { class: "num", text: row.gpus }),
    el("td", { class: `gang ${row.cells.gang.tone}`, title: row.cells.gang.title }, ...gangCell(row)),
    el("td", { class: row.queue ? `queue q-${row.queue.state}` : null, text: row.queue ? row.queue.text : "", title: row.queue ? queueText(row.queue) : null }),
    el("td", { class: "num", text: age(row.createdAt), title: row.createdAt || "" }),
  );
}

// -- the workload page -------------------------------------------------------------------------

function scheduleDetail() {
  clearTimeout(state.detailTimer);
  state.detailTimer = setTimeout(() => showDetail(state.detailId, false), 500);
}

async function showDetail(id, focus) {
  const view = $("detail-view");
  let data;
  try {
    data = await getJSON(`/api/workload?id=${encodeURIComponent(id)}`);
  } catch (error) {
    view.replaceChildren(backLink(), el("p", { class: "bad", text: `cannot show ${id}: ${error.message}` }));
    return;
  }
  if (state.detailId !== id) return;
  view.replaceChildren(...detailContent(data));
  view.dataset.id = id;
  if (focus) view.querySelector("h2").focus();
}

function backLink() {
  return el("a", { class: "back", href: "#/", text: "← all workloads" });
}

function detailContent(data) {
  const row = data.row;
  const out = [backLink()];
  out.push(el("h2", { tabindex: "-1" }, `${row.kind} ${row.namespace ? row.namespace + "/" : ""}${row.name}`));
  if (data.error) out.push(el("p", { class: "bad", text: data.error }));
  if (row.error) out.push(el("p", { class: "bad", text: row.error }));
  const d = data.describe || {};
  const facts = el("dl", { class: "facts" });
  const fact = (name, value, cls) => facts.append(el("dt", { text: name }), el("dd", { text: value, class: cls }));
  fact("Status", `${row.status}${row.phases.length > 1 || row.phases[0] !== row.status ? ` (matched: ${row.phases.join(", ")})` : ""}`, `status s-${row.status}`);
  fact("API version", row.apiVersion);
  fact("Definition", `${row.definition}${data.definition ? ` (${data.definition.origin})` : ""}`);
  fact("Pods", `${row.pods.ready} ready of ${row.pods.desired} desired (${row.pods.total} present)`);
  fact("GPUs requested", String(row.gpus));
  fact("Gang", row.cells.gang.title);
  if (d.gangScope) {
    const inScope = d.gangScope.inScope;
    const state = inScope === true ? "in the scope" : inScope === false ? "outside the scope" : "undecided";
    fact("Gang scope", `${state}: ${d.gangScope.reason}`, inScope === false ? "bad" : null);
  }
  const queue = d.queue || row.queue;
  if (queue) {
    fact("Queue", queueText(queue), queue.state === "Admitted" || queue.state === "Finished" ? "good" : "bad");
    for (const note of [...(queue.notes || []), ...(queue.positionNote ? [queue.positionNote] : [])]) fact("", note);
  }
  fact("Created", row.createdAt || "");
  if (row.cluster) fact("Cluster", row.cluster);
  out.push(facts);
  if (d.gang && !d.gang.error) out.push(...gangPicture(d.gang));
  if (d.components) {
    out.push(el("h3", { text: "Components" }));
    out.push(renderTree(d.components.map(componentNode), "component tree"));
  }
  if (d.ownerTree) {
    // the workloads it creates through other kinds (karta.report.owner_tree; kli describe's Owner tree)
    out.push(el("h3", { text: "Owner tree" }));
    out.push(renderTree([ownerNode(d.ownerTree.root)], "owner tree"));
    if (d.ownerTree.omitted) out.push(el("p", { class: "muted", text: `${d.ownerTree.omitted} more owned workload(s) beyond the tree's bounds` }));
  }
  if (d.ownedBy) out.push(el("p", { text: `Owned by ${d.ownedBy}, its top-level workload.` }));
  if (d.pendingPods && d.pendingPods.length) {
    out.push(el("h3", { text: "Pending pods" }));
    for (const group of d.pendingPods) {
      out.push(
        el(
          "div",
          { class: "pending" },
          el("p", {}, el("strong", { text: `${group.count} pod${group.count === 1 ? "" : "s"}` }), ` ${group.reason || "not scheduled yet"}`),
          group.message ? el("p", { class: "msg", text: group.message }) : null,
          el("p", { class: "muted", text: group.pods.join(", ") }),
        ),
      );
    }
  }
  if (d.conditions && d.conditions.length) {
    out.push(el("h3", { text: "Conditions" }));
    out.push(table(["Type", "Status", "Reason", "Message", "Since"], d.conditions.map((c) => [c.type, c.status, c.reason, c.message, c.lastTransitionTime || ""])));
  }
  out.push(el("h3", { text: "Events" }));
  if (d.events === null || d.events === undefined) out.push(el("p", { class: "muted", text: "events could not be read" }));
  else if (!d.events.length) out.push(el("p", { class: "muted", text: "no recent events" }));
  else out.push(table(["Type", "Reason", "Object", "Message", "Count", "Last seen"], d.events.map((e) => [e.type, e.reason, e.objects.join(", "), e.message, String(e.count), e.lastSeen || ""])));
  for (const warning of d.warnings || []) out.push(el("p", { class: "bad", text: warning }));
  out.push(el("h3", { text: "Gang scheduling" }));
  out.push(el("p", { text: data.groupObjects.length ? `Group objects in the cluster: ${data.groupObjects.join(", ")}` : "No group object in the cluster owned by this workload." }));
  if (data.gangPlan) out.push(collapsible("Gang plan", data.gangPlan));
  for (const [backend, result] of Object.entries(data.gang || {})) {
    if (result.error) out.push(el("details", {}, el("summary", { text: `${backend}: cannot render` }), el("p", { class: "bad", text: result.error })));
    else out.push(collapsible(`${backend}: ${result.objects.length} object${result.objects.length === 1 ? "" : "s"} rendered`, result.objects, result.warnings));
  }
  if (data.definition) out.push(collapsible(`Definition ${data.definition.name} (${data.definition.source})`, data.definition.spec));
  return out;
}

function collapsible(title, value, warnings) {
  const box = el("details", {}, el("summary", { text: title }));
  for (const w of warnings || []) box.append(el("p", { class: "bad", text: w }));
  box.append(el("pre", { text: JSON.stringify(value, null, 2) }));
  return box;
}

const WHEN = new Set(["Since", "Last seen"]); // a time is read whole: never wrapped

function table(headers, rows) {
  const head = el("tr", {}, ...headers.map((h) => el("th", { scope: "col", text: h })));
  const body = rows.map((cells) => el("tr", {}, ...cells.map((c, i) => el("td", { text: c, class: headers[i] === "Message" ? "msg" : WHEN.has(headers[i]) ? "when" : null }))));
  return el("table", { class: "plain" }, el("thead", {}, head), el("tbody", {}, ...body));
}

// The gang picture: per replica gang (several gangs) or the one gang, the pods bound to a Node
// against the minimum, and each sub-group's (karta.report.gang_state's perGang and subGroups).
function gangPicture(gang) {
  const out = [el("h3", { text: "Gang: pods bound against the minimum" })];
  const box = el("div", { class: "gangs" });
  // not met is red once the gang has pods, amber while it has none yet (as the list's cell)
  const tone = (met, pods) => (met ? "good" : pods ? "bad" : "warn");
  const line = (name, bound, minimum, met, cls, pods) =>
    el(
      "div",
      { class: `gang-line ${cls || ""}` },
      el("span", { class: "gang-name", text: name }),
      meter(bound, minimum, met, `${name}: ${bound} of ${minimum} bound${met ? ", minimum met" : ", minimum not met"}`),
      el("span", { class: tone(met, pods), text: `${bound}/${minimum} bound · ${met ? "met" : "not met"}` }),
    );
  const gangs = gang.perGang && gang.perGang.length ? gang.perGang : null;
  box.append(line(gangs ? `all ${gangs.length} gangs` : "gang", gang.scheduled, gang.minMember, gang.minimumMet, "g-total", gang.pods));
  for (const g of gangs || []) box.append(line(g.name, g.scheduled, g.minMember, g.minimumMet, "g-replica", g.pods));
  for (const sub of gang.subGroups || []) box.append(line(`sub-group ${sub.name}`, sub.scheduled, sub.minMember, sub.scheduled >= sub.minMember, "g-sub", gang.pods));
  out.push(box);
  return out;
}

// The tree renderer, generic over its nodes: {label, detail, state ("ok" | "bad" | "warn" | ""),
// mono, children: [node]}. The component tree is one source of nodes (componentNode below); any
// other tree (an owner chain) gives nodes of the same shape.
function renderTree(roots, label) {
  const tree = el("ul", { class: "tree", role: "tree", "aria-label": label });
  for (const node of roots) tree.append(treeItem(node));
  return tree;
}

function treeItem(node) {
  const children = node.children || [];
  const item = el(
    "li",
    { role: "treeitem", "aria-expanded": children.length ? "true" : null, class: node.mono ? "pod" : null },
    el("span", { class: `dot ${node.state || "none"}`, "aria-hidden": "true" }),
    el("span", { class: "node-name", text: node.label }),
    node.detail ? el("span", { class: "node-detail", text: ` ${node.detail}` }) : null,
  );
  if (children.length) {
    const group = el("ul", { role: "group" });
    for (const child of children) group.append(treeItem(child));
    item.append(group);
  }
  return item;
}

function componentNode(component) {
  const replicas = component.replicas || {};
  const ready = replicas.ready === null || replicas.ready === undefined ? "?" : replicas.ready;
  const gpus = component.resources && component.resources.gpus ? `, ${component.resources.gpus} GPU` : "";
  const nodes = component.nodes && component.nodes.length ? `, on ${component.nodes.join(", ")}` : "";
  const kind = component.kind ? `${component.kind.kind} · ` : "";
  const whole = replicas.desired || 0;
  const state = ready === "?" ? "" : ready >= whole ? "ok" : "warn";
  const pods = (component.pods || []).map((pod) => {
    const reason = pod.reason ? ` (${pod.reason})` : "";
    const done = pod.ready || pod.phase === "Succeeded";
    const mark = done ? "✓" : "✗";
    return { label: `${mark} ${pod.name}`, detail: `${pod.phase}${reason}${pod.node ? ` on ${pod.node}` : ""}`, state: done ? "ok" : pod.phase === "Pending" ? "warn" : "bad", mono: true, children: [] };
  });
  return {
    label: component.name,
    detail: `${kind}${ready}/${replicas.desired} ready${gpus}${nodes}`,
    state,
    children: [...pods, ...(component.children || []).map(componentNode)],
  };
}

function ownerNode(node) {
  // a workload of the owner tree (describe.ownerTree: karta.report.owner_tree), for renderTree
  const status = node.error ? `unknown (${node.error})` : (node.phases || []).join(", ") || "Undefined";
  const gpus = node.gpus ? `, ${node.gpus} GPU` : "";
  const pods = node.pods || { ready: 0, total: 0 };
  return {
    label: `${node.kind}/${node.name}`,
    detail: `${status} · ${pods.ready}/${pods.total} pods ready${gpus}${node.gang ? " · owns the gang" : ""}`,
    state: node.error ? "bad" : pods.ready >= pods.total ? "ok" : "warn",
    children: (node.children || []).map(ownerNode),
  };
}

// -- the queue page (Kueue) -------------------------------------------------------------------

// A page read on request (the queues, the capacity): its JSON drawn by content(), or why not.
async function showPage(page, focus) {
  const view = $(page.view);
  let data;
  try {
    data = await getJSON(page.url);
  } catch (error) {
    view.replaceChildren(backLink(), el("p", { class: "bad", text: `cannot show ${page.what}: ${error.message}` }));
    return;
  }
  if (location.hash !== page.hash) return;
  view.replaceChildren(...page.content(data));
  view.dataset.loaded = "true";
  if (focus) view.querySelector("h2").focus();
}

function count(value) {
  return value === null || value === undefined ? "?" : String(value);
}

function bar(resource) {
  const label = `${resource.used}/${resource.nominal}`;
  const track = el("div", { class: "quota-bar", role: "img", "aria-label": `${resource.resource} in ${resource.flavor}: ${label} used` });
  if (resource.fraction !== null && resource.fraction !== undefined) {
    const fill = el("div", { class: resource.fraction >= 1 ? "fill full" : "fill" });
    fill.style.width = `${Math.min(100, Math.max(0, resource.fraction * 100))}%`;
    track.append(fill);
  }
  return track;
}

function queuesContent(data) {
  const out = [backLink(), el("h2", { tabindex: "-1", text: "Queues (Kueue)" })];
  const several = data.clusters.length > 1;
  for (const cluster of data.clusters) {
    if (several) out.push(el("h3", { text: `Cluster ${cluster.cluster}` }));
    if (!cluster.served) {
      out.push(el("p", { class: "muted", text: "Kueue is not installed in this cluster (no ClusterQueue resource is served)." }));
      continue;
    }
    for (const warning of cluster.warnings) out.push(el("p", { class: "bad", text: warning }));
    if (!cluster.clusterQueues.length && !cluster.warnings.length) out.push(el("p", { class: "muted", text: "No ClusterQueue." }));
    for (const cq of cluster.clusterQueues) {
      const box = el("article", { class: "cq", "data-name": cq.name });
      box.append(el("h3", { text: `ClusterQueue ${cq.name}` }));
      if (cq.missing) box.append(el("p", { class: "bad", text: "named by LocalQueues but not found (or not readable)" }));
      else box.append(el("p", { class: "counts", text: `${count(cq.admitted)} admitted, ${count(cq.reserving)} reserving quota, ${count(cq.pending)} pending` }));
      if (cq.resources.length) {
        const rows = cq.resources.map((r) =>
          el(
            "tr",
            { "data-resource": r.resource, "data-flavor": r.flavor },
            el("td", { text: r.flavor }),
            el("td", { text: r.resource }),
            el("td", {}, bar(r)),
            el("td", { class: "num used", text: `${r.used}/${r.nominal}` }),
            el("td", { class: "num", text: r.reserved }),
            el("td", { class: "num", text: r.borrowed }),
          ),
        );
        const head = el("tr", {}, ...["Flavor", "Resource", "Quota used", "Used/nominal", "Reserved", "Borrowed"].map((h) => el("th", { scope: "col", text: h })));
        box.append(el("table", { class: "plain quota" }, el("thead", {}, head), el("tbody", {}, ...rows)));
      }
      if (cq.localQueues.length) {
        box.append(el("p", { class: "muted", text: "LocalQueues:" }));
        box.append(
          el("ul", { class: "lqs" }, ...cq.localQueues.map((lq) => el("li", { text: `${lq.namespace}/${lq.name}: ${count(lq.admitted)} admitted, ${count(lq.pending)} pending` }))),
        );
      }
      out.push(box);
    }
  }
  return out;
}

// -- the capacity page ------------------------------------------------------------------------

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined) continue;
    if (key === "text") node.textContent = String(value);
    else node.setAttribute(key, String(value));
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

// One stacked bar: bound requests, then pending ones, against the Nodes' allocatable GPUs (the
// scale is whichever is larger, so pending beyond the capacity shows past the capacity mark).
function capacityBar(requested, pending, allocatable, scale, label) {
  const width = 600;
  const height = 22;
  const x = (v) => (scale > 0 ? (Math.max(0, v || 0) / scale) * width : 0);
  const chart = svg("svg", { class: "cap-bar", viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": label, preserveAspectRatio: "none" });
  chart.append(svg("title", { text: label }));
  chart.append(svg("rect", { class: "track", x: 0, y: 0, width, height }));
  chart.append(svg("rect", { class: "seg-requested", x: 0, y: 0, width: x(requested), height }));
  chart.append(svg("rect", { class: "seg-pending", x: x(requested), y: 0, width: x(pending), height }));
  if (allocatable !== null && allocatable !== undefined) {
    const at = Math.min(width - 1, x(allocatable));
    chart.append(svg("line", { class: "capacity-mark", x1: at, x2: at, y1: 0, y2: height }));
  }
  return chart;
}

// The recent history (the server's ring): allocatable, bound and pending GPUs over time.
// Samples read while something was unreadable (partial) are left out, and the chart says so.
function historyChart(history, pick, names, label, short) {
  const points = history.filter((h) => !h.partial && pick(h).some((v) => v !== null && v !== undefined));
  const left = history.filter((h) => h.partial).length;
  const note = left ? ` ${left} partial sample${left === 1 ? "" : "s"} not drawn.` : "";
  if (points.length < 2) {
    const text = short ? "collecting…" : `History: collecting (a sample every 15 s, the last hour kept while the view runs).${note}`;
    return el("p", { class: "muted history-empty", text });
  }
  const width = 600;
  const height = 110;
  const pad = 18;
  const t0 = points[0].t;
  const t1 = points[points.length - 1].t;
  const top = Math.max(1, ...points.flatMap((h) => pick(h).map((v) => v || 0)));
  const x = (t) => pad + ((t - t0) / Math.max(1, t1 - t0)) * (width - 2 * pad);
  const y = (v) => height - pad - ((v || 0) / top) * (height - 2 * pad);
  const chart = svg("svg", { class: "history", viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": label });
  chart.append(svg("title", { text: label }));
  chart.append(svg("line", { class: "axis", x1: pad, x2: width - pad, y1: height - pad, y2: height - pad }));
  pick(points[0]).forEach((_, series) => {
    const d = points.map((h, i) => `${i ? "L" : "M"}${x(h.t).toFixed(1)},${y(pick(h)[series]).toFixed(1)}`).join(" ");
    chart.append(svg("path", { class: `series ${names[series]}`, d }));
  });
  const minutes = Math.round((t1 - t0) / 60);
  chart.append(svg("text", { class: "tick", x: pad, y: height - 3, text: minutes ? `${minutes} min ago` : `${Math.round(t1 - t0)} s ago` }));
  chart.append(svg("text", { class: "tick", x: width - pad, y: height - 3, "text-anchor": "end", text: "now" }));
  chart.append(svg("text", { class: "tick", x: 2, y: pad - 4, text: `${top} GPUs` }));
  if (note) chart.append(svg("text", { class: "tick", x: width / 2, y: height - 3, "text-anchor": "middle", text: note.trim() }));
  return chart;
}

function capacityContent(data) {
  const out = [backLink(), el("h2", { tabindex: "-1", text: "GPU capacity" })];
  out.push(
    el("p", { class: "legend" },
      el("span", { class: "key key-requested" }), " requested by pods bound to a Node ",
      el("span", { class: "key key-pending" }), " requested by pending pods ",
      el("span", { class: "key key-capacity" }), " allocatable on the Nodes (the mark; dashed in the history)"),
  );
  const several = data.clusters.length > 1;
  for (const cluster of data.clusters) {
    const box = el("article", { class: "capacity", "data-cluster": cluster.cluster });
    box.append(el("h3", { text: several ? `Cluster ${cluster.cluster}` : `Cluster ${cluster.cluster}` }));
    if (cluster.partial.length) {
      const warn = el("div", { class: "partial", role: "alert" }, el("strong", { text: "Partial data: these numbers are not the whole cluster's." }));
      for (const why of cluster.partial) warn.append(el("p", { text: why }));
      box.append(warn);
    }
    const alloc = cluster.gpusAllocatable;
    const req = cluster.gpusRequested;
    const pend = cluster.gpusPending;
    const summary = cluster.summary; // the server's words (karta.report.GpuTotals.summary)
    box.append(el("p", { class: "cap-summary", text: summary }));
    const scale = Math.max(alloc || 0, (req || 0) + (pend || 0), 1);
    box.append(capacityBar(req, pend, alloc, scale, summary));
    box.append(el("h4", { text: "Recent history" }));
    box.append(historyChart(cluster.history, (h) => [h.allocatable, h.requested, h.pending], ["allocatable", "requested", "pending"], `GPUs allocatable, requested and pending, the last ${cluster.history.length} samples`));
    box.append(el("h4", { text: "Per namespace" }));
    if (!cluster.namespaces.length) {
      box.append(el("p", { class: "muted", text: req === null ? "unknown: the pods could not be read" : "No pod requests a GPU." }));
    } else {
      const top = Math.max(alloc || 0, ...cluster.namespaces.map((n) => n.gpusRequested + n.gpusPending), 1);
      const rows = cluster.namespaces.map((n) => {
        const words = `${n.namespace}: ${n.gpusRequested} GPUs requested by bound pods, ${n.gpusPending} pending (${n.pods} pods)`;
        const spark = historyChart(
          cluster.history.map((h) => ({ t: h.t, partial: h.partial, v: h.namespaces[n.namespace] || [0, 0] })),
          (h) => h.v,
          ["requested", "pending"],
          `${n.namespace}: requested and pending over time`,
          true,
        );
        if (spark.classList) spark.classList.add("spark");
        return el(
          "tr",
          { "data-namespace": n.namespace },
          el("th", { scope: "row", text: n.namespace || "(none)" }),
          el("td", {}, capacityBar(n.gpusRequested, n.gpusPending, alloc, top, words)),
          el("td", { class: "num", text: String(n.gpusRequested) }),
          el("td", { class: "num", text: String(n.gpusPending) }),
          el("td", {}, spark),
        );
      });
      const head = el("tr", {}, ...["Namespace", "GPUs", "Bound", "Pending", "History"].map((h) => el("th", { scope: "col", text: h })));
      box.append(el("table", { class: "plain namespaces" }, el("thead", {}, head), el("tbody", {}, ...rows)));
    }
    out.push(box);
  }
  if (!data.clusters.length) out.push(el("p", { class: "muted", text: "No cluster reports its capacity." }));
  return out;
}

// -- routing and controls ----------------------------------------------------------------------

const PAGES = [
  { hash: "#/queues", view: "queues-view", url: "/api/queues", what: "the queues", content: queuesContent },
  { hash: "#/capacity", view: "capacity-view", url: "/api/capacity", what: "the capacity", content: capacityContent },
];

function route() {
  const hash = location.hash || "#/";
  const match = hash.match(/^#\/workload\/(.+)$/);
  const list = $("list-view");
  const detail = $("detail-view");
  const page = PAGES.find((p) => p.hash === hash);
  for (const other of PAGES) $(other.view).hidden = other !== page;
  if (page) {
    state.detailId = null;
    list.hidden = true;
    detail.hidden = true;
    const view = $(page.view);
    delete view.dataset.loaded;
    view.replaceChildren(backLink(), el("p", { class: "muted", text: "loading…" }));
    showPage(page, true);
  } else if (match) {
    state.detailId = decodeURIComponent(match[1]);
    state.opened = state.detailId;
    list.hidden = true;
    detail.hidden = false;
    detail.replaceChildren(backLink(), el("p", { class: "muted", text: "loading…" }));
    showDetail(state.detailId, true);
  } else {
    state.detailId = null;
    detail.hidden = true;
    list.hidden = false;
    renderWindow();
    if (state.opened) {
      const index = state.view.findIndex((r) => r.id === state.opened);
      if (index >= 0) focusRow(index);
    }
  }
}

// Keyboard: rows take the focus (Tab), arrows move between them (the list draws the rows
// around the focused one), Home/End jump, Enter opens, Escape comes back to the list.
function focusRow(index) {
  if (index < 0 || index >= state.view.length) return;
  state.focusIndex = index;
  const scroller = $("scroller");
  const height = state.rowHeight;
  const head = $("rows").tHead ? $("rows").tHead.offsetHeight : 0;
  if (index * height < scroller.scrollTop) scroller.scrollTop = index * height;
  else if ((index + 1) * height + head > scroller.scrollTop + scroller.clientHeight) scroller.scrollTop = (index + 1) * height + head - scroller.clientHeight;
  renderWindow();
  const tr = document.querySelector(`#body tr[data-index="${index}"]`);
  if (tr) tr.focus({ preventScroll: true });
}

function rowKey(event) {
  const tr = event.target.closest("tr[data-id]");
  if (!tr) return;
  const index = Number(tr.dataset.index);
  const moves = { ArrowDown: index + 1, ArrowUp: index - 1, PageDown: index + 10, PageUp: index - 10, Home: 0, End: state.view.length - 1 };
  if (event.key === "Enter" && event.target === tr) {
    location.hash = `#/workload/${encodeURIComponent(tr.dataset.id)}`;
  } else if (event.key in moves) {
    event.preventDefault();
    focusRow(Math.max(0, Math.min(state.view.length - 1, moves[event.key])));
  }
}

function setup() {
  $("scroller").addEventListener("scroll", () => requestAnimationFrame(() => renderWindow(false)), { passive: true });
  window.addEventListener("resize", () => requestAnimationFrame(() => renderWindow()));
  $("body").addEventListener("keydown", rowKey);
  $("body").addEventListener("focusin", (event) => {
    const tr = event.target.closest("tr[data-index]");
    if (tr) state.focusIndex = Number(tr.dataset.index);
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && (location.hash || "#/") !== "#/" && !event.defaultPrevented) {
      location.hash = "#/";
    }
  });
  $("f-general").addEventListener("change", (event) => {
    state.filters.general = event.target.checked;
    $("scroller").scrollTop = 0;
    refresh();
  });
  for (const [id, key] of [["f-namespace", "namespace"], ["f-kind", "kind"], ["f-status", "status"], ["f-gpu", "gpu"], ["f-gang", "gang"]]) {
    $(id).addEventListener("change", (event) => {
      state.filters[key] = event.target.value;
      $("scroller").scrollTop = 0;
      refresh();
    });
  }
  let typing = null;
  $("f-text").addEventListener("input", (event) => {
    clearTimeout(typing);
    typing = setTimeout(() => {
      state.filters.text = event.target.value.trim().toLowerCase();
      $("scroller").scrollTop = 0;
      refresh();
    }, 120);
  });
  $("filters").addEventListener("submit", (event) => event.preventDefault());
  for (const th of document.querySelectorAll("#rows th[data-sort]")) {
    th.querySelector("button").addEventListener("click", () => {
      if (state.sort === th.dataset.sort) state.desc = !state.desc;
      else {
        state.sort = th.dataset.sort;
        state.desc = false;
      }
      refresh();
    });
  }
  window.addEventListener("hashchange", route);
  route();
  loadAll().catch(showLoadError);
  setInterval(() => { if (!state.detailId) renderWindow(); }, 30000); // ages move on
}

document.addEventListener("DOMContentLoaded", setup);
