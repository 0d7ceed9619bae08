// The kgwalk query page: a question -> POST /retrieve (or /answer when the service has an LLM),
// drawn as nodes, walks, timings and the subgraph the walks cover; GET /status on the second view.
// Text from the service is only ever set as textContent, never parsed as HTML.
"use strict";

const KEY_STORE = "kgwalk-api-key";  // sessionStorage: gone when the tab closes
const $ = (id) => document.getElementById(id);
let health = { name: "", answer: false };
let graph = null;  // the cytoscape instance of the last result
let keyWanted = null;  // a promise resolved once the user gives a key

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (name === "text") node.textContent = value;
    else if (name === "class") node.className = value;
    else node.setAttribute(name, value);
  }
  node.append(...children.filter((child) => child !== null && child !== undefined));
  return node;
}

// ---- the API: one-line reasons, and the key asked for once ------------------------------------

function reason(response, body) {
  const detail = body && body.detail;
  if (Array.isArray(detail)) {  // 422: [{"loc": ["body", "k_nodes"], "msg": "..."}]
    return detail.map((e) => `${(e.loc || []).slice(1).join(".") || "body"}: ${e.msg}`).join("; ");
  }
  if (typeof detail === "string") return detail;
  return `HTTP ${response.status} ${response.statusText}`.trim();
}

function askForKey(note) {
  if (!keyWanted) {
    $("key-note").textContent = note;
    $("key-form").hidden = false;
    $("key-input").value = "";
    $("key-input").focus();
    keyWanted = new Promise((resolve) => {
      $("key-form").onsubmit = (event) => {
        event.preventDefault();
        const key = $("key-input").value.trim();
        if (!key) return;
        sessionStorage.setItem(KEY_STORE, key);
        $("key-form").hidden = true;
        keyWanted = null;
        resolve();
      };
    });
  }
  return keyWanted;
}

async function api(method, path, body) {
  for (;;) {
    const key = sessionStorage.getItem(KEY_STORE);
    const headers = { Accept: "application/json" };
    if (key) headers.Authorization = `Bearer ${key}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response;
    try {
      response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (error) {
      throw new Error(`cannot reach the kgwalk service: ${error.message}`);
    }
    if (response.status === 401) {
      sessionStorage.removeItem(KEY_STORE);
      await askForKey(key ? "the service refused that key: try again" : "this service needs its API key");
      continue;
    }
    const data = await response.json().catch(() => null);
    if (!response.ok) throw new Error(reason(response, data));
    return data;
  }
}

function showError(box, message) {
  box.textContent = message || "";
  box.hidden = !message;
}

// ---- the ask view ------------------------------------------------------------------------------

async function ask(event) {
  event.preventDefault();
  const body = { question: $("question").value };
  for (const [input, field] of [["k-nodes", "k_nodes"], ["k-walks", "k_walks"]]) {
    if ($(input).value !== "") body[field] = Number($(input).value);
  }
  showError($("error"), "");
  $("ask-button").disabled = true;
  document.body.classList.add("busy");
  try {
    render(await api("POST", health.answer ? "/answer" : "/retrieve", body));
  } catch (error) {
    $("result").hidden = true;
    showError($("error"), error.message);
  } finally {
    $("ask-button").disabled = false;
    document.body.classList.remove("busy");
  }
}

function render(result) {
  $("result").hidden = false;
  $("answer-box").hidden = !("answer" in result);
  if ("answer" in result) {
    $("answer").textContent = result.answer;
    $("answer").classList.toggle("unknown", !result.known);
  }
  renderMatchNote(result);
  renderTimings(result.timings_ms);
  renderNodes(result.nodes);
  drawGraph(result.nodes);
}

// The API's "no good match" signal: the best walk's evidence is weak, whatever the top scores say.
function renderMatchNote(result) {
  const weak = result.no_good_match === true;
  $("match-note").hidden = !weak;
  $("match-note").textContent = weak ? result.match_note || "No good match: the best walk's evidence is weak." : "";
}

function renderTimings(timings) {
  const phases = Object.entries(timings).filter(([phase]) => phase !== "total");
  const sum = phases.reduce((total, [, ms]) => total + ms, 0) || 1;
  const bar = el("div", { class: "timing-bar" });
  const list = el("ul", { class: "timing-list" });
  phases.forEach(([phase, ms], i) => {
    const part = el("span", { class: `phase phase-${i % 6}`, title: `${phase} ${ms.toFixed(1)} ms` });
    part.style.flexGrow = String(ms / sum);
    bar.append(part);
    list.append(el("li", {}, el("span", { class: `swatch phase-${i % 6}` }), el("b", { text: phase }), ` ${ms.toFixed(1)} ms`));
  });
  const total = timings.total ?? phases.reduce((t, [, ms]) => t + ms, 0);
  list.append(el("li", { class: "total" }, el("b", { text: "total" }), ` ${total.toFixed(1)} ms`));
  $("timings").replaceChildren(bar, list);
}

function renderNodes(nodes) {
  $("nodes").replaceChildren(...nodes.map((node) => el("li", { class: "node" },
    el("div", { class: "node-head" },
      el("span", { class: "label", text: node.label }),
      el("span", { class: "score", text: `score ${node.score.toFixed(3)}` }),
      node.matched ? el("span", { class: "badge", text: "named in the question" }) : null),
    el("ol", { class: "walks" }, ...node.walks.map((walk) => {
      const item = el("li", { class: "walk", "data-walk": String(walk.walk_id), tabindex: "0" },
        el("div", { class: "walk-head" },
          el("span", { class: "score", text: walk.score.toFixed(3) }),
          el("span", { class: "kind", text: walk.kind }),
          el("span", { class: "text", text: walk.text })),
        el("table", { class: "triples" }, ...walk.triples.map(([head, relation, tail]) => el("tr", {},
          el("td", { text: head }), el("td", { class: "relation", text: relation }), el("td", { text: tail })))),
        // its answer set: the other ends of its relation path from its root (query.also_chars), as the CLI prints it
        walk.also_labels && walk.also_labels.length
          ? el("p", { class: "also" }, el("span", { class: "also-head", text: "Also: " }), el("span", { class: "also-list", text: walk.also_labels.join(", ") }))
          : null);
      item.addEventListener("click", () => followWalk(walk.walk_id, item));
      return item;
    })))));
}

// ---- the subgraph ------------------------------------------------------------------------------

// Entities as nodes, each triple once as a labelled edge in the KG's direction (a walk may have
// gone against it); the topic (named in the question, else the retrieved nodes) and walk ends marked.
function subgraph(nodes) {
  const entities = new Map();
  const edges = new Map();
  const ends = new Set();
  const named = nodes.filter((node) => node.matched).map((node) => node.id);
  const topic = new Set(named.length ? named : nodes.map((node) => node.id));
  for (const node of nodes) {
    entities.set(node.id, node.label);
    for (const walk of node.walks) {
      walk.nodes.forEach((id, i) => entities.set(id, walk.node_labels[i]));
      ends.add(walk.nodes[walk.nodes.length - 1]);
      walk.triples.forEach(([head, relation, tail], i) => {
        let [source, target] = [walk.nodes[i], walk.nodes[i + 1]];
        if (walk.node_labels[i] !== head || walk.node_labels[i + 1] !== tail) [source, target] = [target, source];
        const id = `${source}>${relation}>${target}`;
        if (!edges.has(id)) edges.set(id, { id, source: `n${source}`, target: `n${target}`, label: relation, walks: [] });
        edges.get(id).walks.push(walk.walk_id);
      });
    }
  }
  return [
    ...[...entities].map(([id, label]) => ({
      group: "nodes",
      data: { id: `n${id}`, label },
      classes: [topic.has(id) ? "topic" : "", ends.has(id) ? "end" : ""].filter(Boolean).join(" "),
    })),
    ...[...edges.values()].map((data) => ({ group: "edges", data })),
  ];
}

const GRAPH_FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif';
// per kind of node: its body's size and its label's font (drawn and measured with the same)
const NODE_LOOK = { topic: { size: 26, fontSize: 13, weight: "bold" }, end: { size: 18, fontSize: 11, weight: "normal" },
                    other: { size: 16, fontSize: 11, weight: "normal" } };
const EDGE_FONT_SIZE = 10;
const LINE_HEIGHT = 1.2;  // of a label's font size
const LABEL_WIDTH = 120;  // px: a longer node label breaks over two lines, then ends in "…"
const GRAPH_PADDING = 16;

const GRAPH_STYLE = [
  { selector: "node", style: {
    label: "data(text)", "font-family": GRAPH_FONT, "font-size": NODE_LOOK.other.fontSize, "line-height": LINE_HEIGHT, color: "#1f2933",
    "text-valign": "bottom", "text-margin-y": 3, "text-wrap": "wrap", "text-max-width": 10000,
    "text-background-color": "#ffffff", "text-background-opacity": 0.75,
    width: "data(size)", height: "data(size)", "background-color": "#9aa5b1" } },
  { selector: "node.end", style: { "background-color": "#e8a33d", shape: "round-rectangle" } },
  { selector: "node.topic", style: { "background-color": "#2f6fde", "font-weight": NODE_LOOK.topic.weight, "font-size": NODE_LOOK.topic.fontSize } },
  { selector: "edge", style: {
    label: "data(label)", "font-family": GRAPH_FONT, "font-size": EDGE_FONT_SIZE, "line-height": LINE_HEIGHT, color: "#52606d",
    "curve-style": "straight", width: 1.5, "line-color": "#b8c2cc", "target-arrow-shape": "triangle", "target-arrow-color": "#b8c2cc",
    "text-margin-x": "data(dx)", "text-margin-y": "data(dy)",
    "text-background-color": "#ffffff", "text-background-opacity": 0.85 } },
  { selector: ".faded", style: { opacity: 0.15 } },
  { selector: "edge.followed", style: { "line-color": "#c2410c", "target-arrow-color": "#c2410c", width: 3, color: "#9a3412" } },
];

function lookOf(classes) {
  return NODE_LOOK[["topic", "end"].find((kind) => classes.split(" ").includes(kind)) || "other"];
}

// The subgraph as kgwalkLayout takes it, its sizes measured in the fonts the drawing uses; each node
// element gets the text (its label, broken into lines) and the size it is drawn with.
function measured(elements, roots) {
  const pen = document.createElement("canvas").getContext("2d");
  const measure = (weight, size) => (text) => { pen.font = `${weight} ${size}px ${GRAPH_FONT}`; return pen.measureText(text).width; };
  const nodes = elements.filter((e) => e.group === "nodes").map((e) => {
    const look = lookOf(e.classes);
    const label = kgwalkLayout.wrapLabel(e.data.label, LABEL_WIDTH, 2, measure(look.weight, look.fontSize));
    e.data.text = label.text;
    e.data.size = look.size;
    return { id: e.data.id, radius: look.size / 2, root: roots.has(e.data.id),
             label: { width: label.width, height: label.lines * look.fontSize * LINE_HEIGHT } };
  });
  nodes.sort((a, b) => b.root - a.root);  // the roots first, in the order they rank (a stable sort)
  const edges = elements.filter((e) => e.group === "edges").map((e) => ({
    id: e.data.id, source: e.data.source, target: e.data.target,
    label: { width: measure("normal", EDGE_FONT_SIZE)(e.data.label), height: EDGE_FONT_SIZE * LINE_HEIGHT } }));
  return { nodes, edges };
}

function drawGraph(nodes) {
  if (graph) graph.destroy();
  const box = $("graph");
  const elements = subgraph(nodes);
  const geometry = kgwalkLayout.layOut(measured(elements, new Set(nodes.map((node) => `n${node.id}`))));
  // kgwalkLayout's places, as tall a box as they need at the zoom that fits their width (at most 1)
  const zoom = Math.min(1, (box.clientWidth - 2 * GRAPH_PADDING) / Math.max(geometry.width, 1));
  box.style.height = `${Math.round(Math.min(900, Math.max(360, geometry.height * zoom + 2 * GRAPH_PADDING)))}px`;
  for (const e of elements) {
    if (e.group === "nodes") e.position = { ...geometry.nodes.get(e.data.id) };
    else Object.assign(e.data, { dx: 0, dy: 0 });
  }
  graph = cytoscape({ container: box, elements, style: GRAPH_STYLE, layout: { name: "preset" }, maxZoom: 2.5, minZoom: 0.1 });
  // each edge label from the midpoint the drawing uses to the centre the layout chose for it
  graph.edges().forEach((edge) => {
    const [centre, middle] = [geometry.edgeLabels.get(edge.id()), edge.midpoint()];
    edge.data({ dx: centre.x - middle.x, dy: centre.y - middle.y });
  });
  graph.fit(undefined, GRAPH_PADDING);
  if (graph.zoom() > 1.2) {  // a small graph is not blown up
    graph.zoom(1.2);
    graph.center();
  }
}

function followWalk(walkId, item) {
  document.querySelectorAll(".walk.followed").forEach((other) => other !== item && other.classList.remove("followed"));
  const on = item.classList.toggle("followed");
  graph.elements().removeClass("faded followed");
  if (!on) return;
  const edges = graph.edges().filter((edge) => edge.data("walks").includes(walkId));
  graph.elements().not(edges.union(edges.connectedNodes())).addClass("faded");
  edges.addClass("followed");
}

// ---- the status view ---------------------------------------------------------------------------

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function table(head, rows) {
  return el("table", { class: "grid" },
    el("thead", {}, el("tr", {}, ...head.map((title) => el("th", { text: title })))),
    el("tbody", {}, ...rows.map((row) => el("tr", {}, ...row.map((cell) => el("td", { text: String(cell) }))))));
}

// Walks per root as a histogram, in at most `bins` bars of equal width over 1..max.
function walksChart(histogram, bins = 24) {
  if (!histogram.length) return el("p", { text: "no walks" });
  const top = histogram[histogram.length - 1].walks;
  const width = Math.max(1, Math.ceil(top / bins));
  const bars = new Map();
  for (const { walks, roots } of histogram) {
    const bin = Math.floor((walks - 1) / width);
    bars.set(bin, (bars.get(bin) || 0) + roots);
  }
  const count = Math.floor((top - 1) / width) + 1;
  const most = Math.max(...bars.values());
  const [w, h, left, bottom] = [460, 150, 44, 30];
  const step = (w - left) / count;
  const chart = svg("svg", { class: "chart", viewBox: `0 0 ${w} ${h + bottom}`, role: "img", "aria-label": "walks per root" });
  chart.append(svg("text", { x: 2, y: 12, class: "axis" }, `${most.toLocaleString()} roots`));
  for (let bin = 0; bin < count; bin++) {
    const roots = bars.get(bin) || 0;
    const barHeight = (roots / most) * (h - 20);
    const lo = bin * width + 1;
    const label = width === 1 ? `${lo}` : `${lo}-${lo + width - 1}`;
    const bar = svg("rect", { x: left + bin * step + 1, y: h - barHeight, width: Math.max(step - 2, 1), height: barHeight, class: "bar" });
    bar.append(svg("title", {}, `${label} walks: ${roots.toLocaleString()} roots`));
    chart.append(bar);
    if (bin % Math.ceil(count / 8) === 0) chart.append(svg("text", { x: left + bin * step + step / 2, y: h + 14, class: "axis", "text-anchor": "middle" }, label));
  }
  chart.append(svg("text", { x: (w + left) / 2, y: h + bottom - 2, class: "axis", "text-anchor": "middle" }, "walks per root"));
  return chart;
}

function hubsChart(hubs) {
  if (!hubs.length) return el("p", { text: "no edges" });
  const most = hubs[0].edges;
  const [w, row, labelWidth] = [460, 20, 170];
  const chart = svg("svg", { class: "chart", viewBox: `0 0 ${w} ${hubs.length * row + 4}`, role: "img", "aria-label": "largest hubs" });
  hubs.forEach((hub, i) => {
    const y = i * row + 2;
    const length = (hub.edges / most) * (w - labelWidth - 110);
    chart.append(svg("text", { x: labelWidth - 6, y: y + 13, class: "hub-label", "text-anchor": "end" },
      hub.label.length > 26 ? `${hub.label.slice(0, 25)}…` : hub.label));
    chart.append(svg("rect", { x: labelWidth, y: y + 2, width: Math.max(length, 1), height: row - 6, class: "bar hub" }));
    chart.append(svg("text", { x: labelWidth + length + 6, y: y + 13, class: "axis" },
      `${hub.edges.toLocaleString()} edges, ${hub.walks.toLocaleString()} walks`));
  });
  return chart;
}

function renderStatus(status) {
  const service = status.service;
  const versions = Object.entries(service.versions).map(([name, version]) => `${name} ${version}`).join(", ");
  const derivedRows = status.derived.map((t) => t.built
    ? [t.table, t.version, Object.entries(t.reflects).map(([name, v]) => `${name} v${v}`).join(", "),
       t.behind.length ? `behind: ${t.behind.map((b) => `${b.table} v${b.reflects} -> v${b.current}`).join("; ")}` : "up to date",
       t.updated]
    : [t.table, "-", "-", "not built", "-"]);
  const refresh = status.last_refresh ? `${status.last_refresh.change} at ${status.last_refresh.at}` : "none since the build";
  const lock = status.writer_lock.held ? `held by ${status.writer_lock.holder}` : "free";
  const corpus = status.corpus;
  $("status").replaceChildren(
    el("p", { class: "where" }, el("b", { text: status.name }), ` at ${status.root}`),
    el("dl", { class: "facts" },
      el("dt", { text: "versions" }), el("dd", { text: versions }),
      el("dt", { text: "embedding model" }), el("dd", { text: service.embed_model }),
      el("dt", { text: "index" }), el("dd", { text: status.index_layout ? `${service.index_backend}: ${status.index_layout}` : service.index_backend }),
      el("dt", { text: "last refresh" }), el("dd", { text: refresh }),
      el("dt", { text: "writer lock" }), el("dd", { text: lock }),
      el("dt", { text: "answers" }), el("dd", { text: service.answer ? "an LLM is configured (/answer)" : "retrieval only (no answer.backend)" })),
    el("h2", { text: "KG tables" }),
    table(["table", "version", "last change"], status.kg.map((t) => [t.table, t.version, t.change])),
    el("h2", { text: "What the corpus and the index reflect" }),
    table(["table", "version", "reflects", "state", "updated"], derivedRows),
    el("div", { class: "charts" },
      el("section", {}, el("h2", { text: `Walks per root (${corpus.walks.toLocaleString()} walks from ${corpus.roots.toLocaleString()} roots)` }),
        walksChart(corpus.walks_per_root)),
      el("section", {}, el("h2", { text: "Largest hubs" }), hubsChart(corpus.hubs))));
}

async function loadStatus() {
  showError($("status-error"), "");
  try {
    renderStatus(await api("GET", "/status"));
  } catch (error) {
    showError($("status-error"), error.message);
  }
}

function show(view) {
  for (const tab of document.querySelectorAll(".tab")) tab.classList.toggle("active", tab.dataset.view === view);
  $("view-ask").hidden = view !== "ask";
  $("view-status").hidden = view !== "status";
  if (view === "status") loadStatus();
}

async function start() {
  $("ask-form").addEventListener("submit", ask);
  for (const tab of document.querySelectorAll(".tab")) tab.addEventListener("click", () => show(tab.dataset.view));
  try {
    health = await api("GET", "/health");
    $("kg-name").textContent = health.name;
    document.title = `kgwalk: ${health.name}`;
    $("ask-button").textContent = health.answer ? "Answer" : "Retrieve";
  } catch (error) {
    showError($("error"), error.message);
  }
  document.body.dataset.ready = "true";  // for the browser test: the page knows whether it answers
}

window.kgwalkPage = { graph: () => graph };  // the drawing, for the browser test
start();
