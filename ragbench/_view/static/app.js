// ragbench view: hash-routed pages rendered from the JSON of /api/<key> (server) or data/<key>.js
// (static export, opened from disk). Every text from a run goes into the page with textContent: model
// outputs are untrusted, nothing of theirs is ever parsed as HTML.
"use strict";
const STATIC = document.body.dataset.mode === "static";
const app = document.getElementById("app");
const cache = new Map();
const waiting = new Map();
const PAGE = 100;

window.RB = {put(key, data) { cache.set(key, data); (waiting.get(key) || []).forEach(f => f(data)); waiting.delete(key); }};

// Served pages are asked for again on every visit (the server reads a run's files again only when they
// changed, so runs made or finished since show up); only comparisons, computed with a bootstrap, are kept.
const KEPT = key => key.startsWith("compare/");

function load(key) {
  if (!STATIC) {
    if (cache.has(key)) return Promise.resolve(cache.get(key));
    return fetch("api/" + key.split("/").map(encodeURIComponent).join("/")).then(async r => {
      const data = await r.json();
      if (!r.ok) throw new Error(data.error || r.statusText);
      if (KEPT(key) && !data.error) cache.set(key, data);
      return data;
    });
  }
  if (cache.has(key)) return Promise.resolve(cache.get(key));
  if (!/^[A-Za-z0-9_.~-]+(\/[A-Za-z0-9_.~-]+)*$/.test(key) || key.split("/").includes("..")) {
    return Promise.reject(new Error(`${key} is not a page of this export`));  // a crafted link must not load other files
  }
  return new Promise((resolve, reject) => {
    waiting.set(key, [...(waiting.get(key) || []), resolve]);
    const s = document.createElement("script");
    s.src = "data/" + key + ".js";
    s.onerror = () => reject(new Error(`${key} is not in this export`));
    document.body.appendChild(s);
  });
}

function show(...nodes) { app.replaceChildren(...nodes.flat(Infinity).filter(n => n !== null && n !== undefined && n !== false && n !== "")); }
function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "class") node.className = v;
    else node.setAttribute(k, v);
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}
const fmt = v => (v === null || v === undefined) ? "–" : (typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toFixed(4)) : String(v));
const ci = e => e && e.ci95 ? ` [${e.ci95[0].toFixed(3)}, ${e.ci95[1].toFixed(3)}]` : "";
const link = (href, text) => h("a", {href}, text);
const json = v => typeof v === "string" ? v : JSON.stringify(v, null, 1);
function table(headers, rows, attrs) {
  return h("table", attrs || {}, h("tr", {}, headers.map(x => x instanceof Node ? x : h("th", {}, x))),
           rows.map(r => h("tr", {}, r.map(c => c instanceof Node && c.tagName === "TD" ? c : h("td", {}, c)))));
}
const num = (v, cls) => h("td", {class: "num" + (cls ? " " + cls : "")}, v);
function crumbs(...parts) {
  const nav = document.getElementById("crumbs");
  nav.replaceChildren(...parts.map(([href, text]) => href ? link(href, text) : h("span", {}, text)));
}
function parseHash() {
  const [path, query] = location.hash.replace(/^#\/?/, "").split("?");
  return {parts: path ? path.split("/").map(decodeURIComponent) : [], query: new URLSearchParams(query || "")};
}

// ---- Runs ---------------------------------------------------------------------------------------
async function runsView() {
  crumbs(["#/", "runs"]);
  const data = await load("runs");
  const costText = c => c.llm_calls === undefined ? "–" :
    `${c.llm_calls} calls, ${c.prompt_tokens}+${c.completion_tokens} tokens, ${c.cache_hits} cache hits, ${c.wall_seconds} s`;
  const status = r => r.state === "running" ? h("span", {class: "warn", title: r.holder}, "running", h("div", {class: "small muted"}, r.holder)) :
    r.state === "stopped" ? h("span", {class: "bad", title: "no results and no process running it: --resume completes it"}, "incomplete / stopped") :
    r.state === "complete" ? h("span", {class: "ok"}, "complete") : h("span", {class: "bad"}, "incomplete");
  const failures = r => Object.entries(r.failures).flatMap(([t, causes]) => causes.map(c => `${t}: ${c.count} × ${c.cause}`));
  const rows = data.runs.map(r => [link(`#/run/${r.rid}`, r.name), r.system || "", r.model || "", r.date || "", status(r),
    Object.entries(r.tasks).map(([t, x]) => h("div", {}, link(`#/examples/${r.rid}/${t}`, t), ` ${x.counts ? `${x.counts.scored}/${x.counts.records} scored` : ""}`)),
    h("div", {class: "small"}, failures(r).map(f => h("div", {}, f))), h("span", {class: "small"}, costText(r.cost))]);
  const parts = [h("h1", {}, `Runs (${data.runs.length})`),
    table(["run", "system", "model", "date", "status", "tasks", "failures by cause", "cost"], rows, {id: "runs"})];
  const tasks = [...new Set(data.runs.flatMap(r => Object.keys(r.tasks)))];
  for (const task of tasks) {
    const runs = data.runs.filter(r => r.tasks[task]);
    const keys = [...new Set(runs.flatMap(r => Object.keys(r.tasks[task].metrics)))];
    parts.push(h("h2", {}, task, data.comparable[task] ? h("span", {}, " · ", link(`#/compare/${task}`, `compare ${runs.length} runs`)) : ""));
    parts.push(table(["run", ...keys.map(k => h("th", {class: "num"}, k))], runs.map(r => [link(`#/run/${r.rid}`, r.name),
      ...keys.map(k => { const e = r.tasks[task].metrics[k]; return num(e ? `${fmt(e.value)}${ci(e)} n=${e.n}` : "–"); })]),
      {class: "results", "data-task": task}));
  }
  show(...parts);
}

// ---- Run ----------------------------------------------------------------------------------------
async function runView(rid) {
  const r = await load(`run/${rid}`);
  crumbs(["#/", "runs"], [null, r.name]);
  const parts = [h("h1", {}, r.name), h("p", {class: "muted"}, `${r.system} · ${r.model || ""} · ${r.state === "running" ? `running: ${r.holder}` : r.date || "incomplete / stopped"} · ${r.path}`)];
  parts.push(h("h2", {}, "Configuration (differs from the defaults)"),
             table(["option", "value"], Object.entries(r.config).map(([k, v]) => [k, h("code", {}, json(v))])));
  for (const [task, x] of Object.entries(r.tasks)) {
    parts.push(h("h2", {}, task, " · ", link(`#/examples/${rid}/${task}`, "examples")));
    if (x.counts) parts.push(h("p", {}, Object.entries(x.counts).map(([k, v]) => `${k} ${v}`).join(" · ")));
    const bad = r.bad_lines[task];
    if (bad && bad.count) parts.push(h("div", {class: "bad-lines", "data-task": task},
      h("p", {class: "bad"}, `${bad.count} line(s) of samples/${task}.jsonl are no sample record and are not among the examples` +
        (bad.count > bad.lines.length ? ` (the first ${bad.lines.length}):` : ":")),
      h("ul", {class: "small"}, bad.lines.map(line => h("li", {}, line)))));
    // a judged key with human labels: its prediction-powered estimate and interval (results.json details' ppi)
    const ppi = Object.values(x.metrics).some(e => e.ppi);
    const judged = Object.values(x.metrics).some(e => e.judge);  // a judged key's agreement (results.json judge_agreement)
    const costs = Object.values(x.metrics).some(e => e.cost);  // tokens and $ per correct answer (results.json efficiency)
    parts.push(table(["metric", "value [95% CI]", "n", "not scorable", "errors", ...(judged ? ["judge agreement"] : []),
                      ...(ppi ? ["PPI with human labels"] : []), ...(costs ? ["tokens / correct", "$ / correct"] : [])],
      Object.entries(x.metrics).map(([k, e]) =>
        [k, num(`${fmt(e.value)}${ci(e)}`), num(e.n), num(e.n_none ?? 0), num(e.n_errors ?? 0),
         ...(judged ? [e.judge || "–"] : []),
         ...(ppi ? [num(e.ppi ? `${fmt(e.ppi.value)}${ci(e.ppi)} (n=${e.ppi.n_labelled}, N=${e.ppi.n_unlabelled})` : "–")] : []),
         ...(costs ? (e.cost || ["–", "–"]).map(num) : [])])));
    for (const line of r.judge_notes[task] || []) parts.push(h("p", {class: "judge-agreement"}, line));
    for (const line of (r.efficiency || {})[task] || []) parts.push(h("p", {class: "efficiency"}, line));
    const causes = r.failures[task] || [];
    if (causes.length) parts.push(h("h3", {}, "Failures by cause"), table(["count", "cause"], causes.map(c =>
      [num(c.count), link(`#/examples/${rid}/${task}?f=failed&q=${encodeURIComponent(c.cause.slice(0, 80))}`, c.cause)])));
    const infra = r.infrastructure_failures[task];
    if (infra) parts.push(h("p", {class: "warn"}, `${infra.calls} failed judge/tool/retrieval call(s) in ${infra.examples} scored examples folded into results: `,
      infra.causes.map(c => `${c.count} × ${c.cause}`).join("; ")));
    const cut = r.token_limit[task];
    if (cut) parts.push(h("p", {class: "warn", id: `token-limit-${task}`}, `${cut.calls} LLM call(s) in ${cut.examples} scored examples stopped at their max_tokens, their outputs cut there: `,
      Object.entries(cut.steps).map(([step, n]) => `${step} ${n}`).join(", ")));
    for (const line of r.system_warnings[task] || []) parts.push(h("p", {class: "warn system-warning"}, line));
    const judging = r.judging[task] || [];
    if (judging.length) parts.push(h("h3", {}, "Judging: cost and agreement with human labels"),
                                   h("ul", {class: "judging"}, judging.map(line => h("li", {}, line))));
    if (r.budget[task]) parts.push(h("h3", {}, "Budget per example, measured from the traces"),
                                   budgetTable(r.budget_quantities, {[r.name]: r.budget[task]}));
    const stats = r.system_stats[task];
    if (stats) parts.push(h("h3", {}, `System statistics (${r.system})`), table(["statistic", "value"], Object.entries(stats).map(([k, v]) => [k, json(v)])));
    const slices = r.slices[task] || {};
    const fields = [...new Set(Object.values(slices).flatMap(s => Object.keys(s)))];
    const matrix = r.matrix[task];
    for (const field of fields) {
      if (matrix && field === matrix.field) continue;
      const keys = Object.keys(slices).filter(k => slices[k][field]);
      const labels = r.slice_order[task][field];  // every key holds every value (pages.slice_tables)
      // n: the most examples a key scored in the slice; a cell with fewer says its own
      const cellN = (k, l) => (slices[k][field][l] || {}).n ?? 0;
      parts.push(h("h3", {}, `${task} by ${field}`), table([field, h("th", {class: "num"}, "n"), ...keys], labels.map(l => {
        const n = Math.max(...keys.map(k => cellN(k, l)));
        const ppi = c => c && c.ppi ? `; PPI ${fmt(c.ppi.value)}${ci(c.ppi)}` : "";  // with human labels
        return [l, num(n), ...keys.map(k => num(`${fmt((slices[k][field][l] || {}).value)}${ci(slices[k][field][l])}` +
                                                (cellN(k, l) < n ? ` (n=${cellN(k, l)})` : "") + ppi(slices[k][field][l])))];
      }), {class: "slice"}));
      const plotKeys = (r.plot_keys[task] || keys.slice(0, 3)).filter(k => slices[k] && slices[k][field]);
      parts.push(h("div", {class: "plot"}, RBPlots.bars(`${task} by ${field}`, Object.fromEntries(plotKeys.map(k => [k, slices[k][field]])), plotKeys, labels)));
    }
    if (matrix) for (const key of matrix.keys || []) {
      const cells = (slices[key] || {})[matrix.field];
      if (cells) parts.push(h("div", {class: "plot"}, RBPlots.heat(`${task}: ${key} (topic × task)`, cells, matrix)));
    }
  }
  show(...parts);
}

// ---- Examples -----------------------------------------------------------------------------------
async function allRows(rid, task, needAll, onProgress) {
  const first = await load(`rows/${rid}/${task}/0`);
  const rows = [...first.rows];
  if (needAll) for (let c = 1; c < first.chunks; c++) { rows.push(...(await load(`rows/${rid}/${task}/${c}`)).rows); onProgress(rows.length, first.total); }
  return [first, rows];
}

// "wrong" is judged on the chosen metric: by default the first one where higher is better (not e.g. length)
const defaultMetric = info => info.metrics.find(m => info.higher_is_better[m] === true) || info.metrics[0];

// a row's failures: the system's error, or the metrics that failed on it ("name: error")
const metricFailures = row => Object.entries(row.score_errors || {}).map(([m, e]) => `${m}: ${e}`);
const failure = row => row.error || metricFailures(row).join("; ");

function matches(row, q, info) {
  const filter = q.get("f"), metric = q.get("m") || defaultMetric(info), text = (q.get("q") || "").toLowerCase();
  if (filter === "failed" && !failure(row)) return false;
  if (filter === "wrong") {
    const v = row.scores[metric], better = info.higher_is_better[metric];
    if (better == null || failure(row) || v === null || v === undefined) return false;  // no better direction: none is wrong
    if (better === false ? !(v > 0) : v > 0) return false;
  }
  const slice = q.get("s");
  // slices: the row's label per field, as results.json names the slice (1 and "1", no value and "None" apart)
  if (slice) { const i = slice.indexOf("="); if (row.slices[slice.slice(0, i)] !== slice.slice(i + 1)) return false; }
  if (text && ![row.id, row.question, row.answer, row.gold, failure(row)].some(x => x && x.toLowerCase().includes(text))) return false;
  return true;
}

async function examplesView(rid, task, q) {
  crumbs(["#/", "runs"], [`#/run/${rid}`, rid], [null, task]);
  const filtered = ["f", "q", "s", "sort"].some(k => q.get(k));
  const status = h("span", {class: "muted small"});
  const [info, rows] = await allRows(rid, task, filtered, (n, total) => { status.textContent = `loading ${n} of ${total} rows…`; });
  let shown = rows.filter(row => matches(row, q, info));
  const sort = q.get("sort");
  if (sort) {
    const [key, dir] = sort.split(":"), sign = dir === "desc" ? -1 : 1;
    const val = r => key === "id" ? r.id : key === "n" ? r.n : (r.scores[key] ?? -Infinity);
    shown = [...shown].sort((a, b) => (val(a) > val(b) ? 1 : val(a) < val(b) ? -1 : 0) * sign);
  }
  const page = Number(q.get("p") || 0);
  const go = changes => { const next = new URLSearchParams(q); for (const [k, v] of Object.entries(changes)) v ? next.set(k, v) : next.delete(k); if (!("p" in changes)) next.delete("p"); location.hash = `#/examples/${rid}/${task}?${next}`; };
  const total = filtered ? shown.length : info.total;
  const search = h("input", {type: "search", placeholder: "search id, question, answer, gold, error", value: q.get("q") || "", id: "search"});
  search.addEventListener("change", () => go({q: search.value}));
  const select = (id, options, value, key) => h("select", {id, onchange: e => go({[key]: e.target.value})},
    options.map(([v, label]) => h("option", {value: v, selected: v === (value || "") ? "selected" : null}, label)));
  const sliceOptions = [["", "any slice"], ...Object.entries(info.slice_labels).flatMap(([f, labels]) => labels.map(v => [`${f}=${v}`, `${f} = ${v}`]))];
  const controls = h("div", {class: "controls"}, search,
    select("filter", [["", "all examples"], ["failed", "failed"], ["wrong", "wrong"]], q.get("f"), "f"),
    select("metric", info.metrics.map(m => [m, `metric: ${m}`]), q.get("m") || defaultMetric(info), "m"),
    select("slice", sliceOptions, q.get("s"), "s"), status);
  const headers = [["n", "#"], ["id", "id"], [null, "question"], [null, "answer"], [null, "gold"], ...info.metrics.map(m => [m, m]), [null, "error"]]
    .map(([key, label]) => key ? h("th", {class: "sortable", title: "sort", onclick: () => go({sort: sort === `${key}:desc` ? `${key}:asc` : `${key}:desc`})},
      label, sort && sort.startsWith(key + ":") ? (sort.endsWith("desc") ? " ▼" : " ▲") : "") : h("th", {}, label));
  let pageRows = shown.slice(page * PAGE, (page + 1) * PAGE);
  if (!filtered && page * PAGE >= info.chunk_size) {  // a page of a chunk not loaded yet: load just that chunk
    const start = page * PAGE, chunk = Math.floor(start / info.chunk_size);
    pageRows = (await load(`rows/${rid}/${task}/${chunk}`)).rows.slice(start % info.chunk_size, start % info.chunk_size + PAGE);
  }
  const body = pageRows.map(r => [num(r.n), link(`#/example/${rid}/${task}/${r.n}`, r.id ?? "(bad record)"),
    h("td", {class: "wrap"}, r.question), h("td", {class: "wrap"}, r.answer), h("td", {class: "wrap"}, r.gold),
    ...info.metrics.map(m => num(fmt(r.scores[m]))), h("td", {class: "wrap bad"}, failure(r))]);
  const pages = Math.max(1, Math.ceil(total / PAGE));
  const pager = h("div", {class: "pager"}, h("button", {disabled: page === 0 ? "disabled" : null, onclick: () => go({p: String(page - 1)})}, "‹ prev"),
    ` page ${page + 1} of ${pages} · ${total} example(s)${filtered ? ` matching, of ${info.total}` : ""}${info.state === "running" ? " (run in progress: examples so far)" : info.finished ? "" : " (run stopped before its end: examples so far)"} `,
    h("button", {id: "next", disabled: page + 1 >= pages ? "disabled" : null, onclick: () => go({p: String(page + 1)})}, "next ›"));
  const metric = q.get("m") || defaultMetric(info);
  if (q.get("f") === "wrong" && info.higher_is_better[metric] === null) {  // e.g. length, RGB's rejected
    show(h("h1", {}, `${task} · ${rid}`), controls, h("p", {class: "warn", id: "no-direction"},
      `${metric} has no better direction (neither higher nor lower is better): no example is wrong by it. ` +
      "Choose a metric with a direction to see the wrong examples."));
    return;
  }
  show(h("h1", {}, `${task} · ${rid}`), controls, pager, table(headers, body, {id: "examples"}));
}

// ---- Example ------------------------------------------------------------------------------------
const STEP_LABELS = {llm: ["prompt", "reply"], custom: ["inputs", "outputs"]};

function docNode(d, cited) {
  return h("details", {class: "doc card" + (cited ? " cited" : "")},
    h("summary", {}, `[${d.number}] `, cited ? h("span", {class: "badge ok"}, "cited") : "", ` ${d.title || ""} `, h("span", {class: "muted small"}, `id ${d.id ?? "–"}${d.score != null ? ` · score ${fmt(d.score)}` : ""}`),
      d.image ? [" ", imageNode(d.image)] : null),
    d.text ? h("pre", {class: "doctext"}, d.text) : null);
}

// the documents a qrels gold grades relevant: each page's thumbnail (where retrieved), id, grade and rank
const goldPageNode = g => h("span", {class: "gold-page"}, g.image ? imageNode(g.image) : null,
  ` ${g.id} (grade ${fmt(g.grade)}${g.rank != null ? `, retrieved at ${g.rank}` : ", not retrieved"}) `);

function stepNode(step) {
  const flags = [step.cached && h("span", {class: "badge cached"}, "cached"), step.error && h("span", {class: "badge bad"}, "failed")];
  const [asked, answered] = STEP_LABELS[step.kind] || ["request", "response"];
  return h("details", {class: "step " + step.kind + (step.error ? " failed" : ""), "data-step": step.i},
    h("summary", {}, `#${step.i} ${step.kind} · ${step.name}`, h("span", {class: "muted small"},
      ` · ${(step.seconds || 0).toFixed(3)} s${step.kind === "llm" ? ` · ${step.tokens[0]}→${step.tokens[1]} tokens` : ""}` +
      (step.docs.length ? ` · ${step.docs.length} document(s) kept` : "")), flags),
    step.error ? h("pre", {class: "bad"}, step.error) : null,
    h("div", {class: "small muted"}, asked), h("pre", {class: "prompt"}, step.prompt),
    h("div", {class: "small muted"}, answered), h("pre", {class: "reply"}, step.reply),
    step.details ? h("pre", {class: "small"}, step.details) : null,
    step.docs.length ? h("div", {class: "kept"}, h("div", {class: "small muted"}, "documents kept"), step.docs.map(d => docNode(d, false))) : null);
}

function outlineNodes(items, steps, used) {
  return items.map(item => {
    if ("step" in item) { used.add(item.step); return stepNode(steps[item.step]); }
    const inner = outlineNodes(item.items || [], steps, used);
    const ids = [], collect = xs => xs.forEach(x => "step" in x ? ids.push(x.step) : collect(x.items || []));
    collect(item.items || []);
    const seconds = ids.reduce((s, i) => s + (steps[i].seconds || 0), 0);
    const failed = ids.filter(i => steps[i].error).length, cached = ids.filter(i => steps[i].cached).length;
    const info = Object.entries(item.info || {}).map(([k, v]) => `${k}: ${typeof v === "number" ? fmt(v) : json(v)}`).join(" · ");
    return h("details", {class: "group" + (item.chosen ? " chosen" : ""), open: "open", "data-group": item.group},
      h("summary", {}, h("b", {}, item.group), item.chosen ? h("span", {class: "badge chosen"}, "chosen") : "",
        h("span", {class: "muted small"}, ` ${ids.length} step(s) · ${seconds.toFixed(3)} s`),
        failed ? h("span", {class: "badge bad"}, `${failed} failed`) : "", cached ? h("span", {class: "badge cached"}, `${cached} cached`) : ""),
      info ? h("div", {class: "info"}, info) : null, inner);
  });
}

const tracebackNode = text => h("details", {class: "traceback"}, h("summary", {}, "traceback"), h("pre", {class: "bad"}, text));

// an example's image: the run's thumbnail of it, titled by its digest and source; its digest where none was kept
const imageNode = im => {
  const about = `sha256 ${im.sha256}${im.source ? ` · ${im.source}` : ""}${im.bytes != null ? ` · ${im.bytes} bytes` : ""}`;
  return im.thumbnail ? h("img", {class: "thumb", src: im.thumbnail, alt: about, title: about})
    : h("span", {class: "muted", title: about}, `[image ${im.sha256.slice(0, 12)}: no thumbnail kept]`);
};

function exampleBody(x) {
  const field = (label, value, cls) => h("div", {class: "field"}, h("b", {}, label), " ", h("span", {class: cls || ""}, value));
  const tracebacks = x.score_tracebacks || {};
  const used = new Set();
  const timeline = outlineNodes(x.outline, x.steps, used);
  const rest = x.steps.filter(s => !used.has(s.i)).map(stepNode);
  return [
    h("div", {class: "card"}, field("id", x.id), field("question", x.question),
      (x.images || []).length ? field("images", (x.images).map(imageNode)) : null,
      (x.gold_pages || []).length ? field("gold", x.gold_pages.map(goldPageNode)) : field("gold", x.gold_text),
      field("answer", x.answer, "answer"), x.output !== x.answer ? field("raw output", x.output) : null,
      x.error ? field("error", x.error, "bad") : null,
      x.traceback ? tracebackNode(x.traceback) : null,
      field("time", `${x.seconds ?? "–"} s`),
      // the example's slice per field, named as results.json and the Examples page's filter name it
      Object.keys(x.slices).length ? field("slices", Object.entries(x.slices).map(([k, v]) => `${k}=${v}`).join(" · ")) : null),
    h("h2", {}, "Scores"), table(["metric", "value"], [...Object.entries(x.scores).map(([k, v]) => [k, num(fmt(v))]),
      ...Object.entries(x.score_errors).map(([k, v]) => [k, h("td", {class: "bad"}, v, tracebacks[k] ? tracebackNode(tracebacks[k]) : null)])],
      {class: "scores"}),
    x.infrastructure_failures.length ? h("p", {class: "warn"}, "failed calls folded into the result: " + x.infrastructure_failures.join("; ")) : null,
    x.reasons.length ? h("details", {class: "reasons"}, h("summary", {}, `Why: ${x.reasons.length} judge / NLI decision(s)`),
      x.reasons.map(r => h("div", {class: "card small"}, h("b", {}, r.source), ` → ${r.reply}`, h("details", {}, h("summary", {}, "prompt"), h("pre", {}, r.prompt))))) : null,
    h("h2", {}, `Documents (${x.docs.length}; ${x.docs.filter(d => d.cited).length} cited)`),
    x.docs.map(d => docNode(d, d.cited)),
    h("h2", {}, `Trace (${x.steps.length} steps)`), h("div", {class: "timeline"}, timeline, rest),
    x.extras ? h("details", {}, h("summary", {}, "system extras (raw)"), h("pre", {}, x.extras)) : null];
}

async function exampleView(rid, task, n) {
  const x = await load(`example/${rid}/${task}/${n}`);
  crumbs(["#/", "runs"], [`#/run/${rid}`, rid], [`#/examples/${rid}/${task}`, task], [null, String(x.id)]);
  show(h("h1", {}, `${task} · example ${x.id}`), ...exampleBody(x));
}

async function pairView(task, ridA, nA, ridB, nB) {
  const [a, b] = await Promise.all([load(`example/${ridA}/${task}/${nA}`), load(`example/${ridB}/${task}/${nB}`)]);
  crumbs(["#/", "runs"], [`#/compare/${task}`, `compare ${task}`], [null, String(a.id)]);
  show(h("h1", {}, `${task} · example ${a.id}: side by side`),
    h("div", {class: "cols"}, h("div", {}, h("h2", {}, link(`#/run/${ridA}`, ridA)), exampleBody(a)),
      h("div", {}, h("h2", {}, link(`#/run/${ridB}`, ridB)), exampleBody(b))));
}

// ---- Compare ------------------------------------------------------------------------------------
// each run's budget per example (results.json `budget`): a mean, or "not measured" with why
function budgetTable(quantities, budgets) {
  const cell = (b, k) => !b ? "not recorded" : k in (b.not_measured || {}) ? h("span", {title: b.not_measured[k]}, "not measured") : fmt(b[k]);
  return table(["run", ...Object.values(quantities).map(q => h("th", {class: "num"}, q))],
    Object.entries(budgets).map(([rid, b]) => [rid, ...Object.keys(quantities).map(k => num(cell(b, k)))]), {class: "budget"});
}
async function compareView(task, rids) {  // rids: "a~b~c" (first is the baseline); default every run of the task
  crumbs(["#/", "runs"], [null, `compare ${task}`]);
  const c = await load(`compare/${task}` + (rids ? `/${rids}` : ""));
  const parts = [h("h1", {}, `Compare on ${task}`)];
  if (c.runs && c.runs.length > 1) {  // each run can be the baseline A; the others are compared with it
    const order = rid => [rid, ...c.runs.filter(r => r !== rid)].join("~");
    parts.push(h("p", {class: "small baselines"}, "baseline A: ", ...c.runs.flatMap((rid, i) => [i ? " · " : "",
      i === 0 ? h("b", {}, rid) : link(`#/compare/${task}/${order(rid)}`, rid)])));
  }
  if (c.error) parts.push(h("p", {class: "warn"}, c.error));
  else if (c.unfinished_note) parts.push(h("p", {class: "warn small unfinished"}, c.unfinished_note));
  for (const p of c.pairs || []) {
    parts.push(h("h2", {}, `B = ${p.b} vs A = ${p.a}`), h("p", {class: "small runs"}, p.runs), h("h3", {}, "What differs (settings that change what is measured)"),
      h("ul", {class: "differences"}, (p.differences.length ? p.differences : ["nothing"]).map(d => h("li", {}, d))),
      ...p.warnings.map(w => h("p", {class: "warn small"}, w)));
    parts.push(h("h3", {}, "Budget per example, measured from the traces"), budgetTable(c.budget_quantities, p.budgets));
    const pv = x => num(x == null ? "–" : x.toPrecision(3));
    const statsTable = (rows, attrs) => table(["metric", "slice", "n", "A", "B", "B − A", "like for like", "95% CI", "p adj.", "p raw", "test"].map(x => h("th", {}, x)), rows.map(r =>
      [r.metric, r.slice || "all", num(r.n), num(fmt(r.mean_a)), num(fmt(r.mean_b)),
       num((r.diff >= 0 ? "+" : "") + r.diff.toFixed(4), r.higher_is_better == null || r.diff === 0 ? "" : (r.diff > 0) === r.higher_is_better ? "ok" : "bad"),
       r.unlike.length ? h("td", {class: "warn small"}, `not like for like: ${r.unlike.join("; ")}`) : "yes",
       num(r.ci95 ? `[${r.ci95[0].toFixed(4)}, ${r.ci95[1].toFixed(4)}]` : "–"), pv(r.p_adjusted), pv(r.p_value), r.p_value == null ? "–" : r.test]), attrs);
    const bySlice = p.rows.filter(r => r.slice);
    parts.push(statsTable(p.rows.filter(r => !r.slice), {class: "stats"}));
    parts.push(h("p", {class: "small p-note"}, p.p_note));
    if (bySlice.length) parts.push(h("details", {}, h("summary", {}, `by slice value (${bySlice.length} rows)`), statsTable(bySlice, {class: "stats-slices"})));
    for (const d of p.disagreements) {
      for (const [side, title] of [["a_right", `${d.metric}: A right, B wrong`], ["b_right", `${d.metric}: B right, A wrong`]]) {
        parts.push(h("h3", {}, `${title} (${d[side].count})`));
        if (d[side].rows.length) parts.push(table(["id", "question", "answer A", "answer B", ""], d[side].rows.map(r =>
          [r.id, h("td", {class: "wrap"}, r.question), h("td", {class: "wrap"}, r.answer_a), h("td", {class: "wrap"}, r.answer_b),
           link(`#/pair/${task}/${p.a}/${r.n_a}/${p.b}/${r.n_b}`, "side by side")]), {class: "disagree", "data-side": side}));
      }
    }
  }
  show(...parts);
}

async function route() {
  const {parts, query} = parseHash();
  try {
    if (!parts.length) await runsView();
    else if (parts[0] === "run") await runView(parts[1]);
    else if (parts[0] === "examples") await examplesView(parts[1], parts[2], query);
    else if (parts[0] === "example") await exampleView(parts[1], parts[2], parts[3]);
    else if (parts[0] === "compare") await compareView(parts[1], parts[2]);
    else if (parts[0] === "pair") await pairView(...parts.slice(1, 6));
    else show(h("p", {class: "bad"}, "unknown page"));
  } catch (err) {
    show(h("p", {class: "bad", id: "error"}, String(err.message || err)));
  }
  window.scrollTo(0, 0);
  document.body.dataset.ready = location.hash;  // tests wait for this
}
window.addEventListener("hashchange", route);
route();
