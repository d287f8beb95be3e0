// Small DOM helpers. Text from the server is untrusted: it only ever becomes text nodes.

export const $ = (id) => document.getElementById(id);

// el("li", {class: "x", "data-grade": 2}, "text", childNode) — strings become text nodes.
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

export function clear(node) {
  node.replaceChildren();
  return node;
}

const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

// The text as nodes, with every whole-word occurrence of `words` wrapped in <mark>.
export function highlighted(text, words) {
  if (!words || words.length === 0) return [text];
  const edge = "[\\p{L}\\p{M}\\p{N}]";
  const re = new RegExp(`(?<!${edge})(${words.map(escapeRe).join("|")})(?!${edge})`, "giu");
  const out = [];
  let last = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    out.push(el("mark", {}, m[0]));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

export function fmt(x, digits = 4) {
  return typeof x === "number" ? x.toFixed(digits) : "–";
}
