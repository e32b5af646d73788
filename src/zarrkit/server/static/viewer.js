// The zarrkit viewer: a lazily expanded tree of the hierarchy and a pane describing the
// selected node, with a server-rendered preview of arrays. Talks to the JSON API at
// "/?api=..." (see zarrkit/server/app.py); no libraries, no network beyond this server.
"use strict";

const api = (name, params) => "/?" + new URLSearchParams({api: name, ...params});

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === "text") node.textContent = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value);
  }
  for (const child of children) if (child != null) node.append(child);
  return node;
}

async function getJSON(url) {
  const response = await fetch(url);
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

// --- the tree ---------------------------------------------------------------------------
function memberMeta(member) {
  if (member.kind === "array") return `${member.shape.join(" × ") || "scalar"} ${member.dtype}`;
  if (member.kind === "link") return `→ ${member.target}`;
  return `v${member.zarr_format}`;
}

function treeItem(member) {
  const item = el("li", {class: `kind-${member.kind}`, role: "treeitem",
                         "data-path": member.path, "data-kind": member.kind});
  const toggle = el("span", {class: "toggle", text: member.kind === "group" ? "▸" : ""});
  const label = el("span", {class: "label", tabindex: "0"},
                   member.name, el("span", {class: "meta", text: memberMeta(member)}));
  item.append(toggle, label);
  if (member.kind === "group") toggle.addEventListener("click", () => toggleGroup(item));
  label.addEventListener("click", () => {
    if (member.kind === "link") {
      if (member.source === ".") select(member.target.replace(/^\/+/, ""), label);
      else showError(`external link to ${member.target} in ${member.source}`);
    } else {
      select(member.path, label);
    }
  });
  label.addEventListener("keydown", (event) => { if (event.key === "Enter") label.click(); });
  return item;
}

async function toggleGroup(item) {
  const toggle = item.querySelector(":scope > .toggle");
  const open = item.querySelector(":scope > ul");
  if (open) {
    open.remove();
    toggle.textContent = "▸";
    item.setAttribute("aria-expanded", "false");
    return;
  }
  toggle.textContent = "▾";
  item.setAttribute("aria-expanded", "true");
  const list = el("ul", {role: "group"});
  item.append(list);
  try {
    const members = await getJSON(api("tree", {path: item.dataset.path}));
    if (!members.length) list.append(el("li", {class: "meta", text: "(empty)"}));
    for (const member of members) list.append(treeItem(member));
  } catch (error) {
    list.append(el("li", {class: "error", text: error.message}));
  }
}

// --- the node pane ----------------------------------------------------------------------
const pane = () => document.getElementById("node");

function showError(message) {
  pane().replaceChildren(el("p", {class: "error", text: message}));
}

function jsonBlock(title, value, open) {
  const details = el("details", open ? {open: ""} : {},
                     el("summary", {text: title}),
                     el("pre", {text: JSON.stringify(value, null, 2)}));
  return details;
}

async function select(path, label) {
  document.querySelectorAll(".label.selected").forEach((n) => n.classList.remove("selected"));
  if (label) label.classList.add("selected");
  let node;
  try {
    node = await getJSON(api("node", {path}));
  } catch (error) {
    showError(error.message);
    return;
  }
  const title = el("h2", {}, node.path || "/",
                   el("span", {class: "meta", text: `${node.kind}, Zarr v${node.zarr_format}`}));
  const parts = [title];
  if (node.kind === "array") {
    const info = el("div", {}, el("h3", {text: "Array"}), el("table", {class: "info"},
      ...node.info.map(([name, value]) => el("tr", {}, el("td", {text: name}),
                                               el("td", {text: value})))));
    parts.push(el("div", {class: "columns"}, node.preview ? previewSection(node) : null, info));
    if (node.value !== undefined) {
      parts.push(el("h3", {text: "Value"}), el("pre", {text: JSON.stringify(node.value)}));
    }
  }
  parts.push(el("h3", {text: "Attributes"}),
             Object.keys(node.attributes).length
               ? el("pre", {id: "attributes", text: JSON.stringify(node.attributes, null, 2)})
               : el("p", {class: "hint", text: "none"}));
  parts.push(jsonBlock("Metadata document", node.metadata, false));
  pane().replaceChildren(...parts);
  if (node.preview) loadPreview(node);
}

function previewSection(node) {
  const sliders = el("div", {id: "sliders"});
  node.held_axes.forEach((length, axis) => {
    const name = (node.dimension_names && node.dimension_names[axis]) || `axis ${axis}`;
    const output = el("output", {text: "0"});
    const input = el("input", {type: "range", min: "0", max: String(length - 1), value: "0",
                               "data-axis": String(axis)});
    let pending;
    input.addEventListener("input", () => {
      output.textContent = input.value;
      clearTimeout(pending);
      pending = setTimeout(() => loadPreview(node), 120);
    });
    sliders.append(el("label", {class: "slider"}, `${name} (0–${length - 1})`, input, output));
  });
  const box = el("div", {id: "preview-box"},
    el("img", {id: "preview", alt: `preview of ${node.path}`}),
    node.preview === "image"
      ? el("div", {class: "scale"}, el("span", {id: "preview-min"}),
           el("img", {id: "colorbar", src: api("colorbar", {}), alt: "colour scale"}),
           el("span", {id: "preview-max"}))
      : el("div", {class: "scale"}, "range ", el("span", {id: "preview-min"}), " … ",
           el("span", {id: "preview-max"})),
    el("div", {class: "note", id: "preview-note"}));
  return el("div", {}, el("h3", {text: "Preview"}), sliders, box);
}

function formatNumber(text) {
  if (text == null) return "–";
  const value = Number(text);
  return Math.abs(value) >= 1e5 || (value !== 0 && Math.abs(value) < 1e-3)
    ? value.toExponential(3) : String(Number(value.toPrecision(6)));
}

async function loadPreview(node) {
  const index = [...document.querySelectorAll("#sliders input")].map((i) => i.value);
  const image = document.getElementById("preview");
  const note = document.getElementById("preview-note");
  const response = await fetch(api("preview", {path: node.path, index: index.join(",")}));
  if (!image.isConnected) return;  // another node was selected meanwhile
  if (!response.ok) {
    note.textContent = (await response.json()).error;
    note.classList.add("error");
    return;
  }
  const headers = response.headers;
  document.getElementById("preview-min").textContent = formatNumber(headers.get("X-Preview-Min"));
  document.getElementById("preview-max").textContent = formatNumber(headers.get("X-Preview-Max"));
  const shape = headers.get("X-Preview-Shape");
  note.textContent = headers.get("X-Preview-Sampling") === "strided"
    ? `${shape.replace(",", " × ")} samples, evenly strided`
    : `${shape.replace(",", " × ")} samples from evenly spread chunks (the array is large)`;
  const previous = image.src;
  image.src = URL.createObjectURL(await response.blob());
  await image.decode().catch(() => {});
  // Small images are enlarged (pixelated) to a readable size; the natural size is kept.
  const scale = Math.max(1, Math.floor(384 / Math.max(image.naturalWidth, image.naturalHeight)));
  image.style.width = `${image.naturalWidth * scale}px`;
  image.dataset.path = node.path;
  image.dataset.loaded = index.join(",");
  if (previous.startsWith("blob:")) URL.revokeObjectURL(previous);
}

// --- start ------------------------------------------------------------------------------
document.getElementById("store-url").textContent = location.origin + "/";
const root = treeItem({name: "/", path: "", kind: "group", zarr_format: ""});
root.querySelector(".meta").textContent = "root";
document.getElementById("tree").append(root);
toggleGroup(root);
select("", root.querySelector(".label"));
