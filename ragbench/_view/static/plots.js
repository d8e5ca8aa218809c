// Slice bar charts and heat maps drawn as SVG / tables from the run's numbers: every bar carries its
// value (a zero bar is drawn and labelled 0.00), every label its n. Text goes in with textContent only.
"use strict";
const RBPlots = (() => {
  const NS = "http://www.w3.org/2000/svg";
  const COLORS = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860"];
  function el(tag, attrs, text) {
    const node = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function fmt(v) { return v === null || v === undefined ? "–" : Number(v).toFixed(2); }

  // slices: {key: {label: {value, ci95, n}}}, every key holding every label; keys: metric keys to draw;
  // labels: the bars' order (an object's own order puts integer-like labels first).
  function bars(title, slices, keys, labels) {
    keys = keys.filter(k => slices[k]);
    if (!keys.length) return document.createTextNode("");
    const values = keys.flatMap(k => labels.map(l => (slices[k][l] || {}).value || 0));
    const highs = keys.flatMap(k => labels.map(l => ((slices[k][l] || {}).ci95 || [0, 0])[1]));
    const top = Math.max(1e-9, ...values, ...highs), bottom = Math.min(0, ...values);
    const bw = 34, group = keys.length * bw + 18, H = 190, pad = 30, plotEnd = pad + labels.length * group + 10;
    const W = plotEnd + 20 + 7 * Math.max(...keys.map(k => k.length)) + 20;  // the legend right of the bars
    const svg = el("svg", {width: W, height: H + 70, role: "img", "aria-label": title});
    svg.appendChild(el("text", {x: pad, y: 12, "font-weight": "600"}, title));
    const y = v => 34 + (H - 34) * (top - v) / (top - bottom);  // room above for the value labels
    svg.appendChild(el("line", {x1: pad, x2: plotEnd, y1: y(0), y2: y(0), stroke: "#333"}));
    labels.forEach((label, i) => {
      const x0 = pad + i * group + 9;
      keys.forEach((key, j) => {
        const entry = slices[key][label] || {}, v = entry.value || 0, x = x0 + j * bw;
        const h = Math.abs(y(v) - y(0));
        svg.appendChild(el("rect", {x, y: Math.min(y(v), y(0)) - (h < 1 ? 1 : 0), width: bw - 3, height: Math.max(h, 2),
                                    fill: COLORS[j % COLORS.length], "data-value": fmt(entry.value)}));
        if (entry.ci95) svg.appendChild(el("line", {x1: x + bw / 2 - 1.5, x2: x + bw / 2 - 1.5, y1: y(entry.ci95[0]),
                                                    y2: y(entry.ci95[1]), stroke: "#222"}));
        const above = Math.min(y(v), y(0), entry.ci95 ? y(entry.ci95[1]) : Infinity);  // clear of the interval
        svg.appendChild(el("text", {x: x + (bw - 3) / 2, y: above - 3, "text-anchor": "middle",
                                    class: "value"}, fmt(entry.value)));
      });
      const n = Math.max(...keys.map(k => (slices[k][label] || {}).n ?? 0));  // the most any key scored there
      const t = el("text", {x: x0, y: H + 14, transform: `rotate(25 ${x0} ${H + 14})`}, `${label} (n=${n})`);
      svg.appendChild(t);
    });
    keys.forEach((key, j) => {
      svg.appendChild(el("rect", {x: plotEnd + 20, y: 18 + j * 13, width: 9, height: 9, fill: COLORS[j % COLORS.length]}));
      svg.appendChild(el("text", {x: plotEnd + 33, y: 26 + j * 13}, key));
    });
    return svg;
  }

  // A two-way slice (OmniEval's topic x task): cells "row<sep>col" -> {value, n}; empty cells N/A.
  function heat(title, cells, matrix) {
    const sep = matrix.separator || " - ", names = matrix.labels || {};
    const split = Object.keys(cells).map(l => { const i = l.lastIndexOf(sep); return [l, l.slice(0, i), l.slice(i + sep.length)]; });
    const rank = n => { const i = (matrix.order || []).indexOf(n); return i < 0 ? 1e9 : i; };
    const rows = [...new Set(split.map(s => s[1]))].sort((a, b) => rank(a) - rank(b));
    const cols = [...new Set(split.map(s => s[2]))].sort((a, b) => rank(a) - rank(b));
    const vals = Object.values(cells).map(c => c.value).filter(v => v !== null && v !== undefined);
    const lo = Math.min(...vals, 0), hi = Math.max(...vals, 1e-9);
    const table = document.createElement("table");
    table.className = "heat";
    const cap = table.createCaption(); cap.textContent = title;
    const head = table.insertRow();
    head.appendChild(document.createElement("th"));
    cols.forEach(c => { const th = document.createElement("th"); th.textContent = names[c] || c; head.appendChild(th); });
    rows.forEach(r => {
      const tr = table.insertRow();
      const th = document.createElement("th"); th.textContent = names[r] || r; tr.appendChild(th);
      cols.forEach(c => {
        const cell = cells[r + sep + c], td = tr.insertCell();
        if (!cell || cell.value === null || cell.value === undefined) { td.textContent = "N/A"; td.className = "muted"; return; }
        const t = (cell.value - lo) / (hi - lo || 1);
        td.style.background = `rgb(${Math.round(255 - 190 * t)}, ${Math.round(255 - 110 * t)}, ${Math.round(255 - 40 * t)})`;
        td.textContent = `${fmt(cell.value)} (n=${cell.n ?? 0})`;
      });
    });
    return table;
  }
  return {bars, heat, fmt};
})();
