// The app's chart component (explorer/plotly_view.py hands this file to st.components.v2.component).
// explorer/plotly_view.py puts one line before it, `const BUNDLE = "app/static/plotly-cartesian.min.js";`
// (plotly_view.BUNDLE_URL), so the bundle's address is written in one place.
//
// The module loads the bundle once per page and keeps each plot's last drawn JSON, so that a rerun that sends
// the same figure leaves the plot (and the scrubber's position) alone. Relative to the server's root as
// Streamlit knows it (explorer.serve names it on page links), else to the page.
/* global BUNDLE */
let plotly = null;
const drawn = new WeakMap();
const queued = new WeakMap();

function loadPlotly() {
  if (plotly === null) {
    plotly = window.Plotly ? Promise.resolve(window.Plotly) : new Promise((resolve, reject) => {
      const base = (window.__streamlit && window.__streamlit.BACKEND_BASE_URL) || document.baseURI;
      const script = document.createElement("script");
      script.src = new URL(BUNDLE, base).href;
      script.onload = () => resolve(window.Plotly);
      script.onerror = () => { plotly = null; reject(new Error("could not load " + script.src)); };
      document.head.appendChild(script);
    });
  }
  return plotly;
}

function hasFrames(plot) {
  return Boolean(plot._transitionData && Object.keys(plot._transitionData._frameHash || {}).length);
}

// The camera of a figure with frames (the path scrubber) saves the frame on screen as its still picture: the
// current data and title, the slider left out, laid out as the figure's layout.meta.still says (plotly's own
// camera draws the whole plot, slider included).
function frameCamera(Plotly, options) {
  return {
    name: "toImage", title: "Download the frame on screen (" + (options.format || "png").toUpperCase() + ")",
    icon: Plotly.Icons.camera,
    click: (gd) => {
      const still = gd.layout.meta.still;
      const layout = Object.assign({}, gd.layout, {
        sliders: [], height: still.height,
        margin: Object.assign({}, gd.layout.margin, { b: still.margin_b }),
        title: Object.assign({}, gd.layout.title, { y: still.title_y }),
        legend: Object.assign({}, gd.layout.legend, { y: still.legend_y }),
      });
      return Plotly.downloadImage({ data: gd.data, layout }, {
        format: options.format || "png", filename: options.filename || "newplot", scale: options.scale || 1,
        width: gd._fullLayout.width, height: still.height,
      });
    },
  };
}

function configOf(Plotly, figure, text) {
  const config = JSON.parse(text);
  const still = figure.frames && figure.frames.length && figure.layout.meta && figure.layout.meta.still;
  if (still) {
    config.modeBarButtonsToRemove = (config.modeBarButtonsToRemove || []).concat(["toImage"]);
    config.modeBarButtonsToAdd = (config.modeBarButtonsToAdd || []).concat([frameCamera(Plotly, config.toImageButtonOptions || {})]);
  }
  return config;
}

// Draws of one plot run one after another, and only the latest figure is drawn: two overlapping draws
// (a rerun that sends a new figure while the last one is still being drawn) mixed the two figures' frames.
function draw(plot, spec) {
  const previous = queued.get(plot) || Promise.resolve();
  const next = previous.then(() => loadPlotly()).then((Plotly) => {
    if (drawn.get(plot) !== spec) return undefined;
    const figure = spec.parsed;
    const whole = { data: figure.data, layout: figure.layout, frames: figure.frames || [], config: configOf(Plotly, figure, spec.config) };
    // A figure with frames (the path scrubber), or one replacing it, is drawn anew: its frames and slider
    // must not be merged into the last figure's.
    return (whole.frames.length || hasFrames(plot)) ? Plotly.newPlot(plot, whole) : Plotly.react(plot, whole);
  }).catch((error) => {
    drawn.delete(plot);
    plot.textContent = "The chart could not be drawn: " + error.message;
  });
  queued.set(plot, next);
}

// A chart that reports clicks (data.clicks) sends the clicked point to Python as the trigger "click": its trace,
// x, y, customdata and point number (a mask cell to pin, a projection's row to link). Listeners are set again
// after each draw: Plotly.newPlot purges them.
function listen(plot) {
  if (!plot.on) return;
  if (!plot.__craftClick) {
    plot.__craftClick = (event) => {
      const point = event && event.points && event.points[0];
      if (!point || !plot.__craftTrigger) return;
      plot.__craftTrigger("click", {
        curve: point.curveNumber, x: point.x === undefined ? null : String(point.x),
        y: point.y === undefined ? null : String(point.y),
        customdata: point.customdata === undefined ? null : point.customdata, point: point.pointNumber,
        nonce: Date.now(),
      });
    };
  }
  if (plot.removeListener) plot.removeListener("plotly_click", plot.__craftClick);
  plot.on("plotly_click", plot.__craftClick);
}

export default function ({ parentElement, data, setTriggerValue }) {
  let plot = parentElement.querySelector(":scope > .craft-plot");
  if (plot === null) {
    plot = document.createElement("div");
    plot.className = "craft-plot";
    parentElement.appendChild(plot);
  }
  const last = drawn.get(plot);
  if (last === undefined || last.figure !== data.figure || last.config !== data.config) {
    const figure = JSON.parse(data.figure);
    // The figure's height before it is drawn: the page lays out around it at once (Plotly's default is 450).
    plot.style.height = ((figure.layout && figure.layout.height) || 450) + "px";
    const spec = { figure: data.figure, config: data.config, parsed: figure };
    drawn.set(plot, spec);
    draw(plot, spec);
  }
  plot.__craftTrigger = data.clicks ? setTriggerValue : null;
  if (data.clicks) (queued.get(plot) || Promise.resolve()).then(() => listen(plot));
  return () => {
    drawn.delete(plot);
    if (window.Plotly) window.Plotly.purge(plot);
  };
}
