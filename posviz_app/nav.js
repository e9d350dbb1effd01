// Lecture mode's navigation (st.components.v2, inline, no build step): Back, the slide's title
// and Next, and the keys a presentation clicker sends (PageDown / PageUp, → / ←). posviz_app/
// lecture.py sends {step, count, title, back, next}; this sends back the slide asked for.
//
// Every press counts: the component keeps the slide the presses lead to and sends that slide,
// not "one more". Three presses 40 ms apart, while the page is still drawing the first, ask for
// slide 4; the server's newest rerun request carries it (Streamlit keeps the newest state of a
// component, where three clicks of one button fold into one). The keys work wherever the focus
// is, except in a text box, a slider or a menu, where they belong to that control.

const KEYS = { PageDown: 1, ArrowRight: 1, PageUp: -1, ArrowLeft: -1 };
const PENDING_MS = 30000; // a slide asked for and never answered is forgotten after this long
const navs = new WeakMap(); // parentElement -> Nav

// Whether a key pressed on `target` belongs to it (typing, a slider, a menu).
function ownsKeys(target) {
  if (!(target instanceof Element)) return false;
  if (target.isContentEditable) return true;
  const tag = target.tagName;
  if (tag === "TEXTAREA" || tag === "SELECT") return true;
  if (tag === "INPUT") {
    return !["checkbox", "radio", "button", "submit", "reset"].includes(target.type);
  }
  const role = target.getAttribute("role") || "";
  return ["slider", "spinbutton", "combobox", "listbox", "textbox", "menu"].includes(role);
}

function button(className, text, key) {
  const element = document.createElement("button");
  element.type = "button";
  element.className = className;
  const label = document.createElement("span");
  label.textContent = text;
  const hint = document.createElement("kbd"); // the clicker's key, on screens wide enough
  hint.textContent = key;
  element.append(label, hint);
  return element;
}

class Nav {
  constructor(parent) {
    this.root = document.createElement("div");
    this.root.className = "posviz-nav";
    this.back = button("posviz-nav-back", "◀ Back", "PageUp");
    this.title = document.createElement("h2");
    this.title.className = "posviz-nav-title";
    this.next = button("posviz-nav-next", "Next ▶", "PageDown");
    this.back.setAttribute("aria-keyshortcuts", "PageUp ArrowLeft");
    this.next.setAttribute("aria-keyshortcuts", "PageDown ArrowRight");
    this.root.append(this.back, this.title, this.next);
    parent.appendChild(this.root);
    this.data = null;
    this.pending = null; // the slide the presses lead to, until the page shows it
    this.pendingTimer = 0;
    this.seq = 0;
    this.back.addEventListener("click", () => this.move(-1));
    this.next.addEventListener("click", () => this.move(1));
    this.onKey = (event) => {
      const delta = KEYS[event.key];
      if (!delta || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
      if (ownsKeys(event.target) || event.defaultPrevented) return;
      event.preventDefault(); // PageDown would also scroll the page
      this.move(delta);
    };
    document.addEventListener("keydown", this.onKey);
    this.cleanup = () => this.destroy();
  }

  // The page says which press it answered last (data.seq): once it has answered the newest,
  // what it shows is where the presses lead (a busy page answers the last of several at once).
  update(data, setStateValue) {
    if (this.data === null) this.seq = Math.max(this.seq, data.seq || 0);
    this.data = data;
    this.setStateValue = setStateValue;
    if (this.pending !== null && (data.seq || 0) >= this.seq) this.forgetPending();
    this.render();
  }

  // The slide the presses so far lead to: the one being asked for, else the one shown.
  current() {
    return this.pending ?? this.data.step;
  }

  move(delta) {
    if (!this.data) return;
    const target = Math.min(Math.max(this.current() + delta, 0), this.data.count - 1);
    if (target === this.current()) return;
    this.pending = target;
    clearTimeout(this.pendingTimer);
    this.pendingTimer = setTimeout(() => this.forgetPending(), PENDING_MS);
    this.seq += 1;
    this.setStateValue("target", { step: target, seq: this.seq });
    this.render();
  }

  forgetPending() {
    clearTimeout(this.pendingTimer);
    this.pending = null;
    this.render();
  }

  render() {
    const { step, count, title } = this.data;
    const at = this.current();
    this.title.textContent = title;
    this.back.disabled = at <= 0;
    this.next.disabled = at >= count - 1;
    this.root.dataset.step = String(step + 1); // what the page shows, counted from 1
    this.root.dataset.asked = String(at + 1); // where the presses lead
    this.root.classList.toggle("posviz-nav-waiting", at !== step);
  }

  destroy() {
    document.removeEventListener("keydown", this.onKey);
    clearTimeout(this.pendingTimer);
    this.root.remove();
    navs.delete(this.parent);
  }
}

export default function (component) {
  const { data, parentElement, setStateValue } = component;
  let nav = navs.get(parentElement);
  if (!nav) {
    nav = new Nav(parentElement);
    nav.parent = parentElement;
    navs.set(parentElement, nav);
  }
  nav.update(data, setStateValue);
  return nav.cleanup;
}
