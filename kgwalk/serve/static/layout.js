// The subgraph's geometry, as pure functions of sizes (no DOM, no drawing library), so that the page
// draws it and its browser test can check it. Nodes go in layers by hop distance from the walks'
// roots (a walk's step is a layer down), each under the mean of its neighbours above. A check-and-
// nudge pass then moves any node that an edge it does not join passes near (within its radius plus
// CLEARANCE) or through the label of, and any node another node's label or an edge label sits on;
// where nudges go round in circles, the layers are also spread apart. Each edge label sits on its
// edge: at the midpoint, or slid along or off it, clear of nodes, labels and other edges.
"use strict";

const kgwalkLayout = (() => {
  const NODE_GAP = 14;  // px between two neighbours' slots in a layer (a node's slot: its label or body, the wider)
  const LAYER_GAP = 76;  // px from a layer's lowest label to the next layer's nodes: room for edge labels
  const LABEL_GAP = 3;  // px between a node and its label below it (the drawing's text-margin-y)
  const LABEL_PAD = 2.5;  // px the drawing's box of a label reaches beyond its text on each side
  const CLEARANCE = 6;  // px an edge keeps beyond the radius of a node it does not join
  const [NUDGE_ROUNDS, MORE_ROUNDS, SPREAD_EVERY, SPREAD] = [20, 60, 4, 1.2];  // spread(): see there
  const SLIDES = [0.5, 0.42, 0.58, 0.34, 0.66, 0.26, 0.74, 0.18, 0.82];  // where along its edge a label may sit, best first
  const CROSSING = 40;  // what another edge through an edge label costs, in px² of label on label

  // ---- geometry --------------------------------------------------------------------------------

  /** The distance from point p to the segment a-b ({x, y} each). */
  function distanceToSegment(p, a, b) {
    const [dx, dy] = [b.x - a.x, b.y - a.y];
    const length2 = dx * dx + dy * dy;
    const t = length2 === 0 ? 0 : Math.max(0, Math.min(1, ((p.x - a.x) * dx + (p.y - a.y) * dy) / length2));
    return Math.hypot(p.x - a.x - t * dx, p.y - a.y - t * dy);
  }

  /** Whether the segment a-b passes through the box {x1, y1, x2, y2} (Liang-Barsky clipping). */
  function crosses(a, b, box) {
    let [enter, leave] = [0, 1];
    for (const [delta, low, high] of [[b.x - a.x, box.x1 - a.x, box.x2 - a.x], [b.y - a.y, box.y1 - a.y, box.y2 - a.y]]) {
      if (delta === 0) {
        if (low > 0 || high < 0) return false;
      } else {
        enter = Math.max(enter, Math.min(low / delta, high / delta));
        leave = Math.min(leave, Math.max(low / delta, high / delta));
      }
    }
    return enter < leave;
  }

  /** The area two boxes share: 0 when they are apart or only touch. */
  function overlap(a, b) {
    return Math.max(0, Math.min(a.x2, b.x2) - Math.max(a.x1, b.x1)) * Math.max(0, Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1));
  }

  /** Whether two boxes meet (touching counts). */
  function touches(a, b) {
    return a.x1 <= b.x2 && b.x1 <= a.x2 && a.y1 <= b.y2 && b.y1 <= a.y2;
  }

  function boxAround(centre, width, height) {
    return { x1: centre.x - width / 2, y1: centre.y - height / 2, x2: centre.x + width / 2, y2: centre.y + height / 2 };
  }

  /** A node's body, grown by `margin`. */
  function nodeBox(node, at, margin = 0) {
    return boxAround(at, 2 * (node.radius + margin), 2 * (node.radius + margin));
  }

  /** A node's label: centred below it. */
  function labelBox(node, at) {
    const top = at.y + node.radius + LABEL_GAP;
    const half = node.label.width / 2 + LABEL_PAD;
    return { x1: at.x - half, y1: top - LABEL_PAD, x2: at.x + half, y2: top + node.label.height + LABEL_PAD };
  }

  /** An edge's label, centred at `centre`. */
  function edgeLabelBox(edge, centre) {
    return boxAround(centre, edge.label.width + 2 * LABEL_PAD, edge.label.height + 2 * LABEL_PAD);
  }

  const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;

  // ---- layers ----------------------------------------------------------------------------------

  function neighbourSets(graph) {
    const neighbours = new Map(graph.nodes.map((node) => [node.id, new Set()]));
    for (const edge of graph.edges) {
      if (edge.source === edge.target) continue;
      neighbours.get(edge.source).add(edge.target);
      neighbours.get(edge.target).add(edge.source);
    }
    return neighbours;
  }

  /** Node ids by hop distance from the roots (breadth first, so an edge joins one layer or two
   *  neighbouring ones); a part of the graph no root reaches starts from its first node. */
  function layers(graph, neighbours) {
    const depth = new Map();
    const rows = [];
    let queue = graph.nodes.filter((node) => node.root).map((node) => node.id);
    for (const start of graph.nodes) {
      if (!queue.length && !depth.has(start.id)) queue = [start.id];
      for (const id of queue) if (!depth.has(id)) depth.set(id, 0);
      while (queue.length) {
        const id = queue.shift();
        (rows[depth.get(id)] ||= []).push(id);
        for (const next of neighbours.get(id)) {
          if (!depth.has(next)) {
            depth.set(next, depth.get(id) + 1);
            queue.push(next);
          }
        }
      }
    }
    return rows;
  }

  /** Fewer crossings: sweeps that sort each layer by its neighbours' places in the layer above
   *  (going down) or below (going up), as fractions of the layers' widths; a stable sort. */
  function ordered(rows, neighbours) {
    const places = (row) => new Map(row.map((id, i) => [id, (i + 0.5) / row.length]));
    for (let sweep = 0; sweep < 4; sweep++) {
      const down = sweep % 2 === 0;
      for (let k = 0; k < rows.length; k++) {
        const d = down ? k : rows.length - 1 - k;
        const other = rows[down ? d - 1 : d + 1];
        if (!other) continue;
        const [there, here] = [places(other), places(rows[d])];
        const key = new Map(rows[d].map((id) => {
          const near = [...neighbours.get(id)].filter((n) => there.has(n)).map((n) => there.get(n));
          return [id, near.length ? mean(near) : here.get(id)];
        }));
        rows[d] = [...rows[d]].sort((a, b) => key.get(a) - key.get(b));
      }
    }
    return rows;
  }

  /** x per node of a layer, in order, each as near its wish (a number, or null: none) as the slots
   *  allow: the mean of a left-packed and a right-packed placement (both keep the slots apart, so
   *  their mean does too). */
  function placeRow(nodes, wishes) {
    const slot = (node) => Math.max(2 * node.radius, node.label.width + 2 * LABEL_PAD);
    const gaps = nodes.map((node, i) => (i ? (slot(nodes[i - 1]) + slot(node)) / 2 + NODE_GAP : 0));
    const wished = wishes.filter((w) => w !== null);
    const anchor = wished.length ? mean(wished) : 0;
    const packed = (step) => {  // step 1: packed against the left; -1: against the right (negated x)
      const x = new Array(nodes.length);
      const order = [...nodes.keys()];
      if (step < 0) order.reverse();
      let bound = -Infinity;
      for (const i of order) {
        const wish = wishes[i] === null ? (bound === -Infinity ? step * anchor : bound) : step * wishes[i];
        x[i] = Math.max(bound, wish);
        bound = x[i] + (step > 0 ? gaps[i + 1] : gaps[i]);
      }
      return x.map((v) => step * v);
    };
    const [left, right] = [packed(1), packed(-1)];
    return left.map((x, i) => (x + right[i]) / 2);
  }

  // ---- the check and the nudges ----------------------------------------------------------------

  /** Each edge label's centre: the first place along its edge (SLIDES, and up to two label heights off it)
   *  clear of every node, node label, label placed before it and other edge; else the least covered. */
  function edgeLabels(graph, at) {
    const bodies = graph.nodes.map((node) => nodeBox(node, at.get(node.id), 2));
    const labels = graph.nodes.map((node) => labelBox(node, at.get(node.id)));
    const placed = [];
    const centres = new Map();
    for (const edge of graph.edges) {
      const a = at.get(edge.source);
      const b = edge.source === edge.target ? { x: a.x + 50, y: a.y - 50 } : at.get(edge.target);  // a loop: up and right
      const others = graph.edges.filter((other) => other.source !== edge.source || other.target !== edge.target);
      let best = null;
      for (const t of SLIDES) {
        for (const shift of [0, -1, 1, -2, 2]) {
          const centre = { x: a.x + t * (b.x - a.x), y: a.y + t * (b.y - a.y) + shift * (edge.label.height + 2 * LABEL_PAD) };
          const box = edgeLabelBox(edge, centre);
          const cover = 1000 * bodies.reduce((sum, body) => sum + overlap(box, body), 0)
            + [...labels, ...placed].reduce((sum, label) => sum + overlap(box, label), 0)
            + CROSSING * others.filter((other) => crosses(at.get(other.source), at.get(other.target), box)).length;
          if (!best || cover < best.cover) best = { centre, box, cover };
          if (cover === 0) break;
        }
        if (best.cover === 0) break;
      }
      placed.push(best.box);
      centres.set(edge.id, best.centre);
    }
    return centres;
  }

  /** What is wrong with the nodes' places: an edge near a node it does not join (within its radius
   *  plus CLEARANCE) or through its label, two bodies that touch, a node label on another node or
   *  on another node label. */
  function nodeFaults(graph, at) {
    const found = [];
    // what a node takes up (body with the clearance, and label): faults happen only where these meet
    const reach = new Map(graph.nodes.map((node) => {
      const [body, label] = [nodeBox(node, at.get(node.id), CLEARANCE), labelBox(node, at.get(node.id))];
      return [node.id, { x1: Math.min(body.x1, label.x1), y1: body.y1, x2: Math.max(body.x2, label.x2), y2: label.y2 }];
    }));
    for (const edge of graph.edges) {
      const [a, b] = [at.get(edge.source), at.get(edge.target)];
      const span = { x1: Math.min(a.x, b.x), y1: Math.min(a.y, b.y), x2: Math.max(a.x, b.x), y2: Math.max(a.y, b.y) };
      for (const node of graph.nodes) {
        if (node.id === edge.source || node.id === edge.target || !touches(span, reach.get(node.id))) continue;
        const p = at.get(node.id);
        if (distanceToSegment(p, a, b) < node.radius + CLEARANCE) found.push({ kind: "edge", edge, node });
        else if (crosses(a, b, labelBox(node, p))) found.push({ kind: "edge-on-label", edge, node });
      }
    }
    const byLeft = [...graph.nodes].sort((one, other) => reach.get(one.id).x1 - reach.get(other.id).x1);
    byLeft.forEach((first, i) => {
      for (const second of byLeft.slice(i + 1)) {
        if (reach.get(second.id).x1 > reach.get(first.id).x2) break;
        if (!touches(reach.get(first.id), reach.get(second.id))) continue;
        const [one, other] = first.id < second.id ? [first, second] : [second, first];
        const [p, q] = [at.get(one.id), at.get(other.id)];
        if (overlap(nodeBox(one, p, 2), nodeBox(other, q, 2)) > 0) found.push({ kind: "bodies", one, other });
        if (overlap(labelBox(one, p), nodeBox(other, q, 2)) > 0) found.push({ kind: "label-on-node", one, other });
        if (overlap(labelBox(other, q), nodeBox(one, p, 2)) > 0) found.push({ kind: "label-on-node", one: other, other: one });
        if (overlap(labelBox(one, p), labelBox(other, q)) > 0) found.push({ kind: "labels", one, other });
      }
    });
    return found;
  }

  /** Edge labels on nodes (their own ends included). */
  function labelFaults(graph, at, centres) {
    return graph.edges.flatMap((edge) => {
      const box = edgeLabelBox(edge, centres.get(edge.id));
      return graph.nodes.filter((node) => overlap(box, nodeBox(node, at.get(node.id), 2)) > 0)
        .map((node) => ({ kind: "edge-label-on-node", edge, node, box }));
    });
  }

  /** The layers SPREAD times as far apart, for faults that NUDGE_ROUNDS of nudges leave (they can go
   *  round in circles): a long edge between two layers runs flat, near the nodes along them. */
  function spread(at) {
    for (const [id, p] of at) at.set(id, { x: p.x, y: p.y * SPREAD });
  }

  function move(at, id, dx, dy) {
    const p = at.get(id);
    at.set(id, { x: p.x + dx, y: p.y + dy });
  }

  /** Moves `other` sideways, away from `one`, until their centres are `reach` apart across. */
  function sidestep(at, one, other, reach) {
    const [p, q] = [at.get(one.id), at.get(other.id)];
    const side = q.x > p.x || (q.x === p.x && one.id < other.id) ? 1 : -1;
    move(at, other.id, side * (reach - Math.abs(q.x - p.x) + 1), 0);
  }

  function nudge(fault, at) {
    const { kind, edge, node, one, other } = fault;
    if (kind === "edge" || kind === "edge-on-label") {
      // the node steps off the edge's line, square to it and to the side it is on already, until its
      // body (with the clearance) and its label are clear of the line
      const [a, b, p] = [at.get(edge.source), at.get(edge.target), at.get(node.id)];
      const length = Math.hypot(b.x - a.x, b.y - a.y) || 1;
      let [nx, ny] = [-(b.y - a.y) / length, (b.x - a.x) / length];
      if ((p.x - a.x) * nx + (p.y - a.y) * ny < 0) [nx, ny] = [-nx, -ny];
      const corners = [nodeBox(node, p, CLEARANCE), labelBox(node, p)].flatMap((box) => [[box.x1, box.y1], [box.x1, box.y2], [box.x2, box.y1], [box.x2, box.y2]]);
      const nearest = Math.min(...corners.map(([x, y]) => (x - a.x) * nx + (y - a.y) * ny));
      move(at, node.id, nx * (1 - nearest), ny * (1 - nearest));
    } else if (kind === "edge-label-on-node") {
      const [a, b] = [at.get(edge.source), at.get(edge.target)];
      if (node.id === edge.source || node.id === edge.target) {
        // no room along its own edge: the lower end (else the target) moves on, away from the other
        const far = a.y > b.y ? edge.source : edge.target;
        const [from, to] = far === edge.source ? [b, a] : [a, b];
        const length = Math.hypot(to.x - from.x, to.y - from.y) || 1;
        const [ux, uy] = length > 1 ? [(to.x - from.x) / length, (to.y - from.y) / length] : [0, 1];
        const reach = (edge.label.width + 2 * LABEL_PAD) * Math.abs(ux) + (edge.label.height + 2 * LABEL_PAD) * Math.abs(uy);
        move(at, far, ux * (reach / 2 + 4), uy * (reach / 2 + 4));
      } else {  // another node: it steps out from under the label, along the shorter way
        const p = at.get(node.id);
        const [cx, cy] = [(fault.box.x1 + fault.box.x2) / 2, (fault.box.y1 + fault.box.y2) / 2];
        const across = (fault.box.x2 - fault.box.x1) / 2 + node.radius + 3 - Math.abs(p.x - cx);
        const down = (fault.box.y2 - fault.box.y1) / 2 + node.radius + 3 - Math.abs(p.y - cy);
        if (across < down) move(at, node.id, (p.x >= cx ? 1 : -1) * across, 0);
        else move(at, node.id, 0, (p.y >= cy ? 1 : -1) * down);
      }
    } else if (kind === "bodies") {
      sidestep(at, one, other, one.radius + other.radius + 4);
    } else if (kind === "label-on-node") {
      sidestep(at, one, other, one.label.width / 2 + LABEL_PAD + other.radius + 2);
    } else {
      sidestep(at, one, other, (one.label.width + other.label.width) / 2 + 2 * LABEL_PAD + 2);
    }
  }

  // ---- the whole ------------------------------------------------------------------------------

  /**
   * Where to draw a subgraph. `graph`: {nodes: [{id, radius, label: {width, height}, root}], edges:
   * [{id, source, target, label: {width, height}}]}, the roots first, in the order they rank.
   * Returns {nodes: Map id -> {x, y}, edgeLabels: Map id -> {x, y} (each label's centre), faults:
   * what the nudges could not mend (none when all is well), width, height}.
   */
  function layOut(graph) {
    const byId = new Map(graph.nodes.map((node) => [node.id, node]));
    const neighbours = neighbourSets(graph);
    const rows = ordered(layers(graph, neighbours), neighbours);
    const at = new Map();
    // down, up, down: each node under the mean of its neighbours in the layer above, over those
    // below, then under those above again
    for (const going of [1, -1, 1]) {
      for (let k = 0; k < rows.length; k++) {
        const d = going > 0 ? k : rows.length - 1 - k;
        const other = new Set(rows[d - going] || []);
        const wishes = rows[d].map((id) => {
          const xs = [...neighbours.get(id)].filter((n) => other.has(n)).map((n) => at.get(n).x);
          return xs.length ? mean(xs) : at.has(id) ? at.get(id).x : null;
        });
        placeRow(rows[d].map((id) => byId.get(id)), wishes).forEach((x, i) => at.set(rows[d][i], { x, y: 0 }));
      }
    }
    let top = 0;
    for (const row of rows) {
      const nodes = row.map((id) => byId.get(id));
      const radius = Math.max(...nodes.map((node) => node.radius));
      for (const id of row) at.get(id).y = top + radius;
      top += 2 * radius + LABEL_GAP + Math.max(...nodes.map((node) => node.label.height)) + LAYER_GAP;
    }
    // mend the nodes' places, then place the edge labels (an edge label with no room moves nodes too);
    // after NUDGE_ROUNDS, the layers are spread apart as well every SPREAD_EVERY rounds
    let [centres, left] = [null, []];
    for (let round = 0; round < NUDGE_ROUNDS + MORE_ROUNDS; round++) {
      centres = null;
      // an edge through a label leaves it readable (labels have a background): mended while nudges
      // can, then let be
      left = nodeFaults(graph, at).filter((fault) => round < NUDGE_ROUNDS || fault.kind !== "edge-on-label");
      if (!left.length) {
        centres = edgeLabels(graph, at);
        left = labelFaults(graph, at, centres);
        if (!left.length) break;
      }
      if (round >= NUDGE_ROUNDS && round % SPREAD_EVERY === 0) spread(at);
      const moved = new Set();  // one nudge per node a round: moves for several faults at once overshoot
      for (const fault of left) {
        const id = (fault.node || fault.other).id;
        if (!moved.has(id)) nudge(fault, at);
        moved.add(id);
      }
    }
    centres ||= edgeLabels(graph, at);
    const boxes = [...graph.nodes.flatMap((node) => [nodeBox(node, at.get(node.id)), labelBox(node, at.get(node.id))]),
                   ...graph.edges.map((edge) => edgeLabelBox(edge, centres.get(edge.id)))];
    const [x1, y1] = [Math.min(...boxes.map((box) => box.x1)), Math.min(...boxes.map((box) => box.y1))];
    const [x2, y2] = [Math.max(...boxes.map((box) => box.x2)), Math.max(...boxes.map((box) => box.y2))];
    return { nodes: at, edgeLabels: centres, faults: left, width: boxes.length ? x2 - x1 : 0, height: boxes.length ? y2 - y1 : 0 };
  }

  /** A label broken at spaces into at most `lines` lines of at most `width` px (`measure(text)` -> px),
   *  the last one cut with an ellipsis when the label is longer: {text: lines joined by "\n", width, lines}. */
  function wrapLabel(label, width, lines, measure) {
    const out = [];
    let rest = label.split(/\s+/).filter(Boolean);
    while (rest.length && out.length < lines) {
      let take = 1;
      while (take < rest.length && measure(rest.slice(0, take + 1).join(" ")) <= width) take++;
      let line = rest.slice(0, take).join(" ");
      rest = rest.slice(take);
      if (out.length === lines - 1 && (rest.length || measure(line) > width)) {  // the last line: cut to fit
        const words = [line, ...rest].join(" ");
        let keep = words.length;
        while (keep > 1 && measure(`${words.slice(0, keep).trimEnd()}…`) > width) keep--;
        line = `${words.slice(0, keep).trimEnd()}…`;
        rest = [];
      }
      out.push(line);
    }
    return { text: out.join("\n"), width: Math.max(0, ...out.map(measure)), lines: out.length };
  }

  return { layOut, wrapLabel, labelBox, edgeLabelBox };  // the boxes: for the browser test
})();
