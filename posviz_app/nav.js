// Lecture mode's navigation (st.components.v2, inline, no build step): Back, the slide's title
// and Next, and the keys a presentation clicker sends (PageDown / PageUp, → / ←). posviz_app/
// lecture.py sends {step, count, title, seq}; this sends back the slide asked for.
//
// Every press counts: the component keeps the slide the presses lead to and sends that slide,
// not "one more". Three presses 40 ms apart, while the page is still drawing the first, ask for
// slide 4; the server's newest rerun request carries it (Streamlit keeps the newest state of a
// component, where three clicks of one button fold into one). The keys work wherever the focus
// is, except in a text box, a slider or a menu, where they belong to that control.
//
// The presses are the page's, not one drawing's: Streamlit 1.67 runs this function again for
// every new `data` and calls the cleanup of a call whose module import resolved after the next
// call began, with the navigation still on the page. A navigation drawn again (or remounted)
// takes up the presses still waiting for an answer instead of forgetting them, and a cleanup
// only takes the navigation down once it has left the page. If the page answers an older press
// and then stays quiet, the slide asked for is sent again under a new number.

const KEYS = { PageDown: 1, ArrowRight: 1, PageUp: -1, ArrowLeft: -1 };
const PENDING_MS = 30000; // a slide asked for and never answered is forgotten after this long
const RESEND_MS = 3000; // the page answered an older press, then nothing: ask again after this
const navs = new WeakMap(); // parentElement -> Nav
// The presses of this page (one lecture navigation at a time): the number of the last one sent,
// and the slide they lead to until the page shows it. Outlives any one Nav.
// `nav` is the Nav drawn last, the one the timers act on.
const presses = { seq: 0, pending: null, pendingTimer: 0, resendTimer: 0, resent: 0, nav: null };

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
    this.parent = parent;
    this.data = null;
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
    // Streamlit may call a superseded drawing's cleanup while the navigation is still shown:
    // only a navigation that has left the page goes (checked once React has removed it).
    this.cleanup = () => setTimeout(() => this.parent.isConnected || this.destroy(), 0);
  }

  // The page says which press it answered last (data.seq): once it has answered the newest,
  // what it shows is where the presses lead (a busy page answers the last of several at once).
  update(data, setStateValue) {
    const answered = data.seq || 0;
    this.data = data;
    this.setStateValue = setStateValue;
    presses.nav = this;
    clearTimeout(presses.resendTimer);
    if (presses.pending !== null) {
      if (answered >= presses.seq) this.forgetPending();
      else presses.resendTimer = setTimeout(() => presses.nav?.resend(), RESEND_MS);
    }
    presses.seq = Math.max(presses.seq, answered); // a session that has taken presses before
    this.render();
  }

  // The slide the presses so far lead to: the one being asked for, else the one shown.
  current() {
    return presses.pending ?? this.data.step;
  }

  move(delta) {
    if (!this.data || !this.root.isConnected) return; // a navigation that has left the page
    const target = Math.min(Math.max(this.current() + delta, 0), this.data.count - 1);
    if (target === this.current()) return;
    presses.pending = target;
    clearTimeout(presses.pendingTimer);
    presses.pendingTimer = setTimeout(() => presses.nav?.forgetPending(), PENDING_MS);
    this.send(target);
    this.render();
  }

  send(target) {
    presses.seq += 1;
    this.setStateValue("target", { step: target, seq: presses.seq });
  }

  // The page answered an older press and went quiet: the newest request was lost on its way
  // (or its answer was): ask for the same slide again, under a new number.
  resend() {
    if (presses.pending === null || !this.root.isConnected) return;
    presses.resent += 1;
    this.send(presses.pending);
    this.render();
  }

  forgetPending() {
    clearTimeout(presses.pendingTimer);
    clearTimeout(presses.resendTimer);
    presses.pending = null;
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
    this.root.dataset.sent = String(presses.seq); // the number of the last press sent
    this.root.dataset.answered = String(this.data.seq || 0); // the last the page answered
    this.root.dataset.resent = String(presses.resent); // requests sent again
    this.root.classList.toggle("posviz-nav-waiting", at !== step);
  }

  destroy() {
    document.removeEventListener("keydown", this.onKey);
    this.root.remove();
    if (navs.get(this.parent) === this) navs.delete(this.parent);
    if (presses.nav === this) presses.nav = null;
  }
}

export default function (component) {
  const { data, parentElement, setStateValue } = component;
  let nav = navs.get(parentElement);
  if (!nav) {
    nav = new Nav(parentElement);
    navs.set(parentElement, nav);
  }
  nav.update(data, setStateValue);
  return nav.cleanup;
}
