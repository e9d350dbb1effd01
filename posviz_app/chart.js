// posviz's chart component (st.components.v2, inline, no build step): one Plotly graph per
// chart key that lives across reruns and changes with Plotly.react. posviz_app/chart.py sends
// the payload (its format is described there) and reads back the size reported here; its
// start_plotly_early mounts this module once more (as posviz_plotly) with {preload: [...]}:
// the plotly.js builds to load before any chart asks.
//
// Streamlit calls the default export at mount and again with every new payload, with the same
// parentElement; the chart kept for that element is updated, never rebuilt. Every call returns
// the same cleanup, and it takes the chart down only once its element has left the page:
// Streamlit 1.67 also runs the cleanup of a call whose module import resolved after the next
// call began, with the chart still shown (lecture mode's nav.js met the same).
//
// One Plotly.react at a time on the graph: a payload that comes while one is being drawn (a 3D
// scene takes long on a busy machine) is drawn after it, if it is still the newest.

const MAGIC = 0x315a5650; // "PVZ1", little-endian
const RESIZE_DEBOUNCE_MS = 150; // a window being dragged reports its size once it stops
const FIRST_DRAW_WAIT_MS = 1500; // at most this long for a figure laid out for the real size
const REPORTS_PER_SIZE = 2;

const charts = new WeakMap(); // parentElement -> Chart
// The plotly.js builds loaded in this page, by name (a promise of each one's Plotly), shared by
// every instance of this module (the charts' and the early loader's): each loads once.
const builds = (globalThis.__posvizPlotly ??= { loads: new Map(), evaluated: Promise.resolve() });

// The page's own URL is where Streamlit serves its routes (also behind a path prefix).
function pageBase() {
  const path = location.pathname.endsWith("/") ? location.pathname : `${location.pathname}/`;
  return location.origin + path;
}

function addScript(src) {
  return new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = src;
    script.onload = resolve;
    script.onerror = () => reject(new Error(`could not load plotly.js from ${src}`));
    document.head.appendChild(script);
  });
}

// A plotly.js build ({name, path, version}) from Streamlit's component file route. Its URL
// carries plotly.js's version, so any copy the browser's HTTP cache holds is the right one:
// "force-cache" takes it without asking the server (whose "Cache-Control: public" has no
// max-age, so a plain <script src> would download it again on every page load). Builds are
// fetched at once but evaluated one at a time: each sets window.Plotly, taken as it loads.
function loadPlotly(source) {
  let load = builds.loads.get(source.name);
  if (!load) {
    const url = new URL(source.path, pageBase()).href;
    const fetched = fetch(url, { cache: "force-cache" }).then((response) => {
      if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
      return response.blob();
    });
    load = builds.evaluated
      .catch(() => {})
      .then(() => fetched)
      .then((blob) => addScript(URL.createObjectURL(blob)))
      .catch(() => addScript(url)) // a page whose policy refuses blob: scripts
      .then(() => {
        const Plotly = window.Plotly;
        if (Plotly.version !== source.version) {
          console.warn(`posviz: plotly.js ${Plotly.version}, expected ${source.version}`);
        }
        return Plotly;
      });
    builds.evaluated = load;
    builds.loads.set(source.name, load);
    load.catch(() => {
      builds.loads.delete(source.name); // the next payload tries again
    });
  }
  return load;
}

// The payload: magic, JSON length, JSON header, then the 8-byte aligned buffers. Each array
// in the figure is {dtype, shape, bref}; it becomes plotly.js's typed-array spec {dtype, shape,
// bdata} with an ArrayBuffer of its own, which plotly.js reads without base64.
function decode(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteLength < 8 || view.getUint32(0, true) !== MAGIC) {
    throw new Error("not a posviz chart payload");
  }
  const length = view.getUint32(4, true);
  const arrays = [];
  const text = new TextDecoder().decode(bytes.subarray(8, 8 + length));
  const header = JSON.parse(text, (_key, value) => {
    if (value !== null && typeof value === "object" && typeof value.bref === "number") {
      arrays.push(value);
    }
    return value;
  });
  const start = bytes.byteOffset + Math.ceil((8 + length) / 8) * 8;
  for (const spec of arrays) {
    const [offset, size] = header.buffers[spec.bref];
    spec.bdata = bytes.buffer.slice(start + offset, start + offset + size);
    delete spec.bref;
  }
  if (header.template) header.figure.layout.template = sameTemplate(header.template);
  if (header.figure.layout.datarevision !== undefined) plainArrays(header.figure.data);
  return header;
}

// A figure with a datarevision (its arrays change only when it does) gets its arrays as plain
// ones: plotly.js's react counts every typed array as new data (its diff asks Array.isArray)
// and draws the whole figure again, whatever the revision says.
const TYPED = {
  i1: Int8Array, u1: Uint8Array, i2: Int16Array, u2: Uint16Array,
  i4: Int32Array, u4: Uint32Array, f4: Float32Array, f8: Float64Array,
};
function plainArrays(value) {
  if (value === null || typeof value !== "object") return value;
  if (value.bdata instanceof ArrayBuffer && TYPED[value.dtype]) {
    const flat = Array.from(new TYPED[value.dtype](value.bdata));
    const shape = value.shape === undefined ? [] : String(value.shape).split(",").map(Number);
    if (shape.length !== 2) return flat;
    const columns = shape[1];
    return Array.from({ length: shape[0] }, (_, row) => flat.slice(row * columns, (row + 1) * columns));
  }
  for (const key of Object.keys(value)) value[key] = plainArrays(value[key]);
  return value;
}

// The layout's template (sent beside it), one object per template: plotly.js's react compares
// the template by identity and redraws the whole figure ("calc") for a new one, even with the
// same contents, so a figure whose datarevision says its arrays are unchanged (the Training
// tab's loss) would be drawn again at every payload.
const templates = new Map(); // its JSON -> the object every figure gets
function sameTemplate(template) {
  const text = JSON.stringify(template);
  if (!templates.has(text)) templates.set(text, template);
  return templates.get(text);
}

// What the chart has: its width, the px from its top to the window's bottom, the window; null
// while it is not shown (a tab being closed): nothing to measure or draw then.
function measure(element) {
  const box = element.getBoundingClientRect();
  if (box.width < 1) return null;
  let scrolled = 0;
  for (let node = element.parentElement; node; node = node.parentElement) {
    scrolled += node.scrollTop;
  }
  return {
    width: Math.floor(box.width),
    height: Math.max(1, Math.floor(window.innerHeight - (box.top + scrolled))),
    window_width: window.innerWidth,
    window_height: window.innerHeight,
  };
}

// Whether a figure laid out for `canvas` fits what was measured (a chart laid out for the room
// to the window's bottom, `fitted`, depends on the height too; others only on the width).
function fits(measured, canvas, fitted) {
  if (!canvas) return false;
  const same = (name) => measured[name] === canvas[name];
  const across = same("width") && same("window_width");
  return across && (!fitted || (same("height") && same("window_height")));
}

// A figure with a datarevision as text, without its shapes, its template and its traces'
// arrays (which the revision stands for), to tell whether only its shapes changed; null for
// a figure without one.
function shapeless(figure, config) {
  const { data, layout } = figure;
  if (layout.datarevision === undefined) return null;
  const numbers = (value) => Array.isArray(value) && typeof value[0] === "number";
  return JSON.stringify([
    JSON.stringify(layout, (key, value) => (key === "shapes" || key === "template" ? undefined : value)),
    JSON.stringify(data, (_key, value) => (numbers(value) ? undefined : value)),
    config,
  ]);
}

// Streamlit's theme colours, which the component gets as CSS variables, where the figure sets
// none. The font stays Plotly's: posviz's layout is measured for it (Streamlit's Source Sans
// has taller lines: a 20-px label is 27 px high, not 22).
function applyTheme(layout, element) {
  const style = getComputedStyle(element);
  const get = (name) => style.getPropertyValue(name).trim() || undefined;
  const text = get("--st-text-color");
  layout.paper_bgcolor ??= get("--st-background-color");
  layout.font = { color: text, ...layout.font };
  const primary = get("--st-primary-color");
  const toolbar = { bgcolor: "rgba(0, 0, 0, 0)", color: text, activecolor: primary };
  layout.modebar = { ...toolbar, ...layout.modebar };
}

class Chart {
  constructor(parent) {
    this.parent = parent;
    this.graph = document.createElement("div");
    this.graph.className = "posviz-chart";
    parent.appendChild(this.graph);
    this.payload = null; // the newest figure
    this.drawing = null; // the one drawn or being drawn
    this.drawn = false;
    this.unshaped = null; // the drawn figure without its shapes (shapeless), if it has a revision
    this.Plotly = null; // the build that drew the graph, and its name
    this.build = "";
    this.reported = ""; // the size last reported, and how many times in a row
    this.reports = 0;
    this.resizeTimer = 0;
    this.waitTimer = 0;
    this.observer = new ResizeObserver(() => this.resized());
    this.observer.observe(parent);
    this.onWindowResize = () => this.resized();
    window.addEventListener("resize", this.onWindowResize);
    this.queue = Promise.resolve(); // the draw in progress, settled once it is done
    this.cleanup = () => setTimeout(() => this.parent.isConnected || this.destroy(), 0);
  }

  update(payload, setStateValue) {
    this.payload = payload;
    this.setStateValue = setStateValue;
    if (!this.keeps(payload)) loadPlotly(payload.plotly).catch((error) => this.fail(error));
    this.settle();
  }

  // Whether the build that drew the graph draws this payload's figure too.
  keeps(payload) {
    return this.Plotly !== null && payload.plotly.covers.includes(this.build);
  }

  // Report the size if the figure was laid out for another, and draw the newest figure. The
  // first one, and one that fills the window but was laid out for another room (lecture mode's
  // next slide has more text above the chart), wait for a figure laid out for the size just
  // reported: no visible jump, nothing past the window. Others show the new data at once and
  // their size follows. data-fits on the graph says whether what it shows fits.
  settle() {
    const payload = this.payload;
    const measured = payload && measure(this.parent);
    if (!measured) return; // not shown: the ResizeObserver calls again when it is
    const ready = fits(measured, payload.canvas, payload.fitted);
    if (!ready) this.report(measured);
    if (payload === this.drawing) {
      this.graph.dataset.fits = String(ready);
      return;
    }
    if (ready || (this.drawn && !payload.fill)) {
      this.draw(payload, ready);
    } else if (!this.waitTimer) {
      this.graph.dataset.fits = "false";
      this.waitTimer = setTimeout(() => this.draw(this.payload, false), FIRST_DRAW_WAIT_MS);
    }
  }

  // At most REPORTS_PER_SIZE times the same size in a row: a server that lost it (its session
  // state emptied) hears it again, one that will not lay out for it (too narrow) is not asked
  // in a loop.
  report(measured) {
    const size = JSON.stringify(measured);
    this.reports = size === this.reported ? this.reports + 1 : 1;
    this.reported = size;
    if (this.reports <= REPORTS_PER_SIZE) this.setStateValue("size", measured);
  }

  resized() {
    clearTimeout(this.resizeTimer);
    this.resizeTimer = setTimeout(() => {
      const measured = measure(this.parent);
      const layout = this.graph._fullLayout;
      if (measured && this.drawn && layout && layout.width !== measured.width) {
        this.Plotly.relayout(this.graph, { width: measured.width }); // until the new layout
      }
      this.settle();
    }, this.drawn ? RESIZE_DEBOUNCE_MS : 0);
  }

  draw(payload, ready) {
    clearTimeout(this.waitTimer);
    this.waitTimer = 0;
    this.drawing = payload;
    const plotly = this.keeps(payload) ? Promise.resolve(this.Plotly) : loadPlotly(payload.plotly);
    plotly.catch(() => {}); // handled below, once the draw in progress is done
    this.queue = this.queue
      .then(() => plotly) // after the draw in progress, if any
      .then((Plotly) => {
        const measured = measure(this.parent);
        if (payload !== this.payload || !measured) { // a newer one came, or it was hidden
          if (this.drawing === payload) this.drawing = null;
          return;
        }
        const { data, layout } = payload.figure;
        layout.width = measured.width; // Plotly need not measure the page
        layout.height ??= 450; // Plotly's default, explicit: the element is as tall
        if (payload.fill) { // as tall as the window leaves (posviz's figures already are)
          const { gap, min } = payload.fill_room;
          layout.height = Math.max(measured.height - gap, min);
        }
        this.graph.style.height = `${layout.height}px`;
        applyTheme(layout, this.parent);
        if (this.Plotly !== Plotly) { // another build draws it: the old one lets go of it
          if (this.Plotly) this.Plotly.purge(this.graph);
          this.graph.replaceChildren(); // nothing left of it, nor of a failure's message
          this.Plotly = Plotly;
          this.build = payload.plotly.name;
          this.unshaped = null; // nothing drawn by this build yet
        }
        // 3D scenes at the screen's own pixel ratio: plotly.js renders them at 2 by default,
        // four times the pixels of a ratio-1 screen (~12 ms a Training step in software GL)
        const pixels = Math.max(1, Math.round(window.devicePixelRatio || 1));
        const config = { plotGlPixelRatio: pixels, ...payload.config };
        // A figure that differs from the one drawn in its shapes alone (the Training tab's loss
        // at another step: its datarevision says its arrays are the same): a relayout of
        // the shapes, a fraction of a react (benchmarks/training_calls.py prints both charts').
        const unshaped = shapeless(payload.figure, config);
        const shapesOnly = this.drawn && unshaped !== null && unshaped === this.unshaped;
        this.unshaped = null; // until this draw succeeds
        const drawn = shapesOnly
          ? Plotly.relayout(this.graph, { shapes: layout.shapes ?? [] })
          : this.react(Plotly, data, layout, config);
        return drawn.then(() => {
          this.graph.dataset.fits = String(ready);
          this.graph.dataset.plotly = this.build; // which build drew it
          this.drawn = true;
          this.unshaped = unshaped;
        });
      })
      .catch((error) => this.fail(error));
  }

  // Plotly.react, and if it fails, a graph drawn afresh: plotly.js's react cannot turn some
  // figures into others (three panels side by side into three stacked, as a phone's figure
  // replaces the one laid out before its size was known: "Something went wrong with axis
  // scaling", and the graph was left empty), where a new plot of the same figure draws.
  react(Plotly, data, layout, config) {
    return Promise.resolve()
      .then(() => Plotly.react(this.graph, data, layout, config))
      .catch((error) => {
        console.warn("posviz chart: drawn afresh after", error.message);
        Plotly.purge(this.graph);
        return Plotly.react(this.graph, data, layout, config);
      });
  }

  // Back to no graph: the next figure is drawn afresh (Plotly.react on a purged element).
  reset() {
    if (this.Plotly) this.Plotly.purge(this.graph);
    this.Plotly = null;
    this.build = "";
    this.drawn = false;
    this.drawing = null;
    this.unshaped = null;
  }

  fail(error) {
    console.error("posviz chart:", error);
    this.reset(); // a later figure starts again from an empty element
    this.graph.textContent = `The chart could not be drawn (${error.message}). Reload the page.`;
  }

  destroy() {
    this.observer.disconnect();
    window.removeEventListener("resize", this.onWindowResize);
    clearTimeout(this.resizeTimer);
    clearTimeout(this.waitTimer);
    if (this.Plotly) this.Plotly.purge(this.graph);
    this.graph.remove();
    charts.delete(this.parent);
  }
}

export default function (component) {
  const { data, parentElement, setStateValue } = component;
  if (data && data.preload) { // start_plotly_early's: load the builds now, draw nothing
    for (const source of data.preload) {
      loadPlotly(source).catch((error) => console.warn("posviz: plotly.js", error));
    }
    return undefined;
  }
  let chart = charts.get(parentElement);
  if (!chart) {
    chart = new Chart(parentElement);
    charts.set(parentElement, chart);
  }
  try {
    chart.update(decode(data), setStateValue);
  } catch (error) {
    chart.fail(error);
  }
  return chart.cleanup;
}
