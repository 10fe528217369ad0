/// The live preview's script: a lanpush.v1 observer client written independently of the gateway, and the
/// renderer of seed 000's Lock Screen / Dynamic Island rules and seed 002's Aivi templates.
///
/// Model: per device, the activities as the protocol describes them (snapshot / start / update with RFC 7386
/// patches / end / lifecycle). Frames only change the model and mark what changed; one requestAnimationFrame
/// pass renders the latest state of each changed activity, so a burst of updates costs one render per frame.
/// Live timers (chronometer, time_since/time_until, generic remaining_time) tick on the page, never by pushes.
enum PreviewScript {
    static let source = #"""
'use strict';
(function () {
const LOG_LIMIT = 30;
const NOTE_LIMIT = 3;
const TOKEN_KEY = 'lanpush.preview.token';
const $ = (s, r) => (r || document).querySelector(s);
const $$ = (s, r) => Array.from((r || document).querySelectorAll(s));
const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const esc = v => String(v == null ? '' : v).replace(/[&<>"']/g, c => ESC[c]);
const isNum = v => typeof v === 'number' && isFinite(v);
const clamp = (v, a, b) => Math.min(b, Math.max(a, v));
const pad = n => (n < 10 ? '0' : '') + n;

// ------------------------------------------------------------------ colours
// Aivi's identifiers are SwiftUI system colours (seed 002); the dark-appearance values a Lock Screen uses.
const AIVI = {
  red: '#FF453A', orange: '#FF9F0A', yellow: '#FFD60A', green: '#30D158', mint: '#63E6E2', teal: '#40CBE0',
  cyan: '#64D2FF', blue: '#0A84FF', indigo: '#5E5CE6', purple: '#BF5AF2', pink: '#FF375F', brown: '#AC8E68',
  gray: '#8E8E93', gray2: '#636366', gray3: '#48484A', gray4: '#3A3A3C', gray5: '#2C2C2E', gray6: '#1C1C1E',
};
const colorCache = new Map();
const probe = document.createElement('canvas').getContext('2d');

function mkColor(r, g, b, a) {
  const h = x => x.toString(16).padStart(2, '0');
  a = a == null ? 1 : a;
  return { r, g, b, a, hex: '#' + h(r) + h(g) + h(b), css: a >= 1 ? `rgb(${r}, ${g}, ${b})` : `rgba(${r}, ${g}, ${b}, ${+a.toFixed(3)})` };
}
function fromHex(h) {
  if (!/^[0-9a-f]+$/i.test(h)) return null;
  const n = i => parseInt(h.substr(i, 2), 16);
  if (h.length === 3) return mkColor(parseInt(h[0] + h[0], 16), parseInt(h[1] + h[1], 16), parseInt(h[2] + h[2], 16));
  if (h.length === 6) return mkColor(n(0), n(2), n(4));
  if (h.length === 8) return mkColor(n(2), n(4), n(6), n(0) / 255); // #AARRGGBB, as HA / Android write it
  return null;
}
/** A colour as the payload gave it: #RGB, #RRGGBB, #AARRGGBB, CSS names; with `aivi`, Aivi's names first. */
function parseColor(input, aivi) {
  if (typeof input !== 'string' || !input.trim()) return null;
  const key = (aivi ? 'a:' : 'c:') + input;
  if (colorCache.has(key)) return colorCache.get(key);
  const s = input.trim(), lower = s.toLowerCase();
  let out = null;
  if (aivi && AIVI[lower]) out = fromHex(AIVI[lower].slice(1));
  else if (s[0] === '#') out = fromHex(s.slice(1));
  else if (/^[a-z]+$/.test(lower)) {
    probe.fillStyle = '#010203';
    probe.fillStyle = lower;
    const got = probe.fillStyle;
    if (got !== '#010203') {
      if (got[0] === '#') out = fromHex(got.slice(1));
      else { const m = got.match(/[\d.]+/g); if (m) out = mkColor(+m[0], +m[1], +m[2], m[3] == null ? 1 : +m[3]); }
    }
  }
  colorCache.set(key, out);
  return out;
}
function withAlpha(c, a) { return `rgba(${c.r}, ${c.g}, ${c.b}, ${a * c.a})`; }
function luminance(c) {
  const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
  return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
}
const BLACK = mkColor(0, 0, 0), WHITE = mkColor(255, 255, 255);
const HA_BLUE = mkColor(3, 169, 244), AIVI_BLUE = fromHex('0A84FF');
/** seed 000: text_color defaults to a colour that contrasts the background. */
const contrastOf = bg => (luminance(bg) > 0.179 ? BLACK : WHITE);

// ------------------------------------------------------------------ time
function fmtDur(sec) {
  sec = Math.max(0, Math.floor(sec));
  const h = Math.floor(sec / 3600), m = Math.floor((sec % 3600) / 60), s = sec % 60;
  return h ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}
/** auto: count down to t, then up from it (a chronometer); down: to t, stops at 0:00; up: since t. */
function timerText(mode, t, now) {
  const d = (t - now) / 1000;
  if (mode === 'up') return fmtDur(-d);
  if (mode === 'down') return fmtDur(Math.ceil(d));
  return d > 0 ? fmtDur(Math.ceil(d)) : fmtDur(-d);
}
function timerMode(mode, t, now) { return mode === 'auto' ? (t > now ? 'down' : 'up') : mode; }
function timerSpan(field, mode, t, style, extra) {
  const now = Date.now();
  return `<span class="timer" data-field="${field}" data-timer="${mode}" data-t="${Math.round(t)}" ` +
    `data-counting="${timerMode(mode, t, now)}"${style ? ` style="${style}"` : ''}${extra || ''}>${timerText(mode, t, now)}</span>`;
}
const clockTime = ms => { const d = new Date(ms); return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`; };
const relTime = sec => { const d = Math.round(sec - Date.now() / 1000); const a = Math.abs(d);
  const s = a < 90 ? `${a} s` : a < 5400 ? `${Math.round(a / 60)} min` : `${(a / 3600).toFixed(1)} h`;
  return d >= 0 ? `in ${s}` : `${s} ago`; };

// ------------------------------------------------------------------ icons
const SF = {
  washer: ['washing-machine'], dryer: ['tumble-dryer'], dishwasher: ['dishwasher'], bolt: ['flash'],
  'bolt.car': ['car-electric', 'ev-station'], 'ev.charger': ['ev-station'], car: ['car'], thermometer: ['thermometer'],
  'robotic.vacuum': ['robot-vacuum', 'robot'], house: ['home'], bell: ['bell'], timer: ['timer'], clock: ['clock'],
  fan: ['fan'], lightbulb: ['lightbulb'], lock: ['lock'], drop: ['water'], flame: ['fire'], leaf: ['leaf'],
  battery: ['battery'], printer: ['printer'], oven: ['stove'], stove: ['stove'], sun: ['white-balance-sunny'],
  moon: ['weather-night'], cloud: ['weather-cloudy'], snowflake: ['snowflake'], tv: ['television'],
  speaker: ['speaker'], shippingbox: ['package-variant'], box: ['package-variant'], truck: ['truck-delivery', 'truck'],
  gauge: ['gauge'], iphone: ['cellphone'], 'air.conditioner': ['air-conditioner'], refrigerator: ['fridge'],
  door: ['door'], cart: ['cart'], 'cup.and.saucer': ['coffee'], mug: ['coffee'], 'figure.walk': ['walk'],
};
const hasGlyph = name => !!(name && model.mdi && model.mdi.icons[name]);
function sfToMdi(name) {
  const parts = String(name).toLowerCase().split('.').filter(p => p && !['fill', 'circle', 'square', 'badge'].includes(p));
  for (let n = parts.length; n > 0; n--) {
    for (const c of SF[parts.slice(0, n).join('.')] || []) if (hasGlyph(c)) return c;
  }
  for (const p of parts) if (hasGlyph(p)) return p;
  return null;
}
function initials(name) {
  const parts = String(name).replace(/^(mdi|sf):/, '').split(/[-._\s]+/).filter(Boolean);
  if (!parts.length) return '?';
  if (parts.length >= 2) return (parts[0][0] + parts[1][0]).toUpperCase();
  return parts[0][0].toUpperCase() + (parts[0][1] || '');
}
/** One icon: the MDI glyph when the installed font has it, else a fallback glyph naming the slug. */
function glyph(field, label, name, color, gradient) {
  const c = color ? color.css : 'currentColor';
  const attrs = `data-field="${field}" data-icon="${esc(label)}" data-icon-color="${color ? color.hex : ''}"`;
  if (hasGlyph(name)) {
    let style = `color:${c}`;
    if (gradient) style += `;background:linear-gradient(180deg, ${gradient[0]}, ${gradient[1]});-webkit-background-clip:text;background-clip:text;-webkit-text-fill-color:transparent`;
    return `<span class="ic mdi" ${attrs} data-icon-glyph="font" style="${style}" title="${esc(label)}">&#x${model.mdi.icons[name]};</span>`;
  }
  const why = model.mdi ? `not in the installed Material Design Icons font ${model.mdi.version}` : 'no Material Design Icons font installed';
  return `<span class="ic fb" ${attrs} data-icon-glyph="fallback" style="color:${c}" title="${esc(label)} (${esc(why)})" ` +
    `aria-label="${esc(label)}"><span>${esc(initials(label || 'HA'))}</span></span>`;
}
function stateIcon(field, s, color) {
  if (typeof s.icon === 'string' && s.icon) return glyph(field, s.icon, s.icon.replace(/^mdi:/, ''), color);
  return glyph(field, '', 'home-assistant', color);
}
/** A template icon: an SF Symbol name or an Icon object (seed 002), mapped to MDI where it can be. */
function templateIcon(field, spec, fg) {
  if (!spec) return '';
  const name = typeof spec === 'string' ? spec : spec.name;
  const primary = typeof spec === 'object' ? parseColor(spec.primary_color, true) : null;
  const secondary = typeof spec === 'object' ? parseColor(spec.secondary_color, true) : null;
  const color = primary || fg;
  let gradient = null;
  if (typeof spec === 'object' && spec.color_rendering === 'gradient') {
    gradient = [color.css, secondary && spec.rendering_mode === 'palette' ? secondary.css : withAlpha(color, 0.55)];
  }
  return glyph(field, 'sf:' + name, sfToMdi(name), color, gradient);
}

// ------------------------------------------------------------------ model
const model = {
  token: null, conn: 'idle', error: null, errorKind: null, closeCode: null,
  ws: null, retry: 0, retryTimer: null, retryAt: 0, authFailed: false, lastRx: 0,
  devices: new Map(), mdi: null, frames: 0, renders: 0, role: null,
};
const dirty = { chrome: true, devices: new Set(), targets: true };
let scheduled = false;
function schedule() {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(flush);
  setTimeout(flush, 250); // a hidden tab gets no animation frames; render anyway, at most 4 times a second
}
function touchChrome() { dirty.chrome = true; schedule(); }
function touchDev(dev, what) { dev.dirty[what] = true; dirty.devices.add(dev.id); schedule(); }
function touchAct(dev, tag) { dev.dirtyActs.add(tag); dirty.devices.add(dev.id); schedule(); }

function ensureDev(id, name) {
  let dev = model.devices.get(id);
  if (!dev) {
    dev = { id, name: name || id, info: null, acts: new Map(), log: [], notes: [], synced: false, epoch: null, seq: 0,
      el: null, dirty: { info: true, log: true, notes: true, order: true }, dirtyActs: new Set(), removed: [] };
    model.devices.set(id, dev);
    dirty.targets = true;
    dirty.devices.add(id);
    schedule();
  } else if (name && name !== dev.name) { dev.name = name; touchDev(dev, 'info'); dirty.targets = true; }
  return dev;
}

/** RFC 7386 JSON Merge Patch. */
function mergePatch(target, patch) {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out = target && typeof target === 'object' && !Array.isArray(target) ? Object.assign({}, target) : {};
  for (const k of Object.keys(patch)) {
    if (patch[k] === null) delete out[k];
    else out[k] = mergePatch(out[k], patch[k]);
  }
  return out;
}

function mkAct(f, phase) {
  const act = { tag: f.tag, attributes: f.attributes || {}, state: f.state || {}, phase: phase || 'active',
    stale_date: f.stale_date, relevance_score: f.relevance_score, dismissal_date: f.dismissal_date,
    seq: f.seq, alert: null, alertUntil: 0, remaining: null, el: null, updates: 0 };
  noteRemaining(act, true);
  return act;
}
/** generic.remaining_time is "seconds left" as of the update that carried it: anchor it to its arrival. */
function noteRemaining(act, force) {
  const t = act.state.template;
  const rt = t && t.template === 'generic' && isNum(t.remaining_time) ? t.remaining_time : null;
  if (rt == null) { act.remaining = null; return; }
  if (force || !act.remaining || act.remaining.value !== rt) act.remaining = { value: rt, end: Date.now() + rt * 1000 };
}

function logEvent(dev, f, detail) {
  dev.log.push({ at: Date.now(), type: f.type, seq: f.seq, tag: f.tag || (f.data && f.data.tag) || '', detail });
  if (dev.log.length > LOG_LIMIT * 2) dev.log.splice(0, dev.log.length - LOG_LIMIT);
  touchDev(dev, 'log');
}
const short = v => { const s = JSON.stringify(v); return s && s.length > 400 ? s.slice(0, 400) + '…' : s; };

function removeAct(dev, tag) {
  const act = dev.acts.get(tag);
  if (!act) return;
  dev.acts.delete(tag);
  dev.dirtyActs.delete(tag);
  if (act.el) dev.removed.push(act.el);
  touchDev(dev, 'order');
}
function setAlert(act, alert) {
  if (alert && typeof alert === 'object') { act.alert = alert; act.alertUntil = Date.now() + 6000; }
}

// ------------------------------------------------------------------ protocol
function send(obj) { if (model.ws && model.ws.readyState === 1) model.ws.send(JSON.stringify(obj)); }

function onFrame(f) {
  model.frames++;
  const dev = f.device_id != null ? ensureDev(String(f.device_id)) : null;
  switch (f.type) {
    case 'auth_required':
      send({ type: 'auth', token: model.token, role: 'observer' });
      break;
    case 'auth_ok':
      model.conn = 'open'; model.retry = 0; model.error = null; model.errorKind = null; model.closeCode = null;
      model.role = f.role || 'observer';
      try { localStorage.setItem(TOKEN_KEY, model.token); } catch (e) { /* private mode */ }
      send({ type: 'subscribe' });
      refreshDevices();
      touchChrome();
      break;
    case 'auth_invalid':
      model.authFailed = true;
      model.error = f.message || 'invalid token';
      touchChrome();
      break;
    case 'snapshot': {
      if (!dev) break;
      for (const tag of Array.from(dev.acts.keys())) removeAct(dev, tag);
      for (const a of f.activities || []) { dev.acts.set(a.tag, mkAct(a, a.phase)); touchAct(dev, a.tag); }
      const epochNote = dev.epoch && dev.epoch !== f.epoch ? ' (new epoch)' : '';
      dev.epoch = f.epoch; dev.seq = f.seq; dev.synced = false;
      logEvent(dev, f, `${(f.activities || []).length} activities${epochNote}`);
      touchDev(dev, 'order'); touchDev(dev, 'info');
      break;
    }
    case 'start': {
      if (!dev) break;
      removeAct(dev, f.tag);
      const act = mkAct(f, f.phase || 'active');
      setAlert(act, f.alert);
      dev.acts.set(f.tag, act);
      touchAct(dev, f.tag); touchDev(dev, 'order');
      logEvent(dev, f, short(f.state));
      break;
    }
    case 'update': case 'end': {
      if (!dev) break;
      const act = dev.acts.get(f.tag);
      logEvent(dev, f, short(f.patch) + (f.type === 'end' && f.dismissal_date ? ` · dismissal ${relTime(f.dismissal_date)}` : '') +
        (f.silent ? ' · silent' : '') + (f.alert ? ' · alert ' + short(f.alert) : ''));
      if (!act) break;
      act.state = mergePatch(act.state, f.patch || {});
      act.seq = f.seq; act.updates++;
      noteRemaining(act, false);
      if (f.type === 'end') {
        act.phase = 'ended'; act.dismissal_date = f.dismissal_date;
        if (f.stale_date !== undefined) act.stale_date = f.stale_date;
        if (f.relevance_score !== undefined) act.relevance_score = f.relevance_score;
        // Ended and dismissed in one step (clear_notification, as on the phone): the card goes at once.
        if (f.phase === 'dismissed') { removeAct(dev, f.tag); touchDev(dev, 'order'); break; }
      } else {
        act.phase = f.phase || 'active';
        act.stale_date = f.stale_date; act.relevance_score = f.relevance_score;
        setAlert(act, f.alert);
      }
      touchAct(dev, f.tag); touchDev(dev, 'order');
      break;
    }
    case 'lifecycle': {
      if (!dev) break;
      logEvent(dev, f, f.phase);
      if (f.phase === 'dismissed') removeAct(dev, f.tag);
      else { const act = dev.acts.get(f.tag); if (act) { act.phase = f.phase; act.seq = f.seq; touchAct(dev, f.tag); } }
      break;
    }
    case 'notification': {
      if (!dev) break;
      logEvent(dev, f, short({ title: f.title, message: f.message, data: f.data }));
      dev.notes.unshift({ at: Date.now(), title: f.title || '', message: f.message || '', tag: (f.data && f.data.tag) || '' });
      dev.notes.length = Math.min(dev.notes.length, NOTE_LIMIT);
      touchDev(dev, 'notes');
      break;
    }
    case 'clear':
      if (!dev) break;
      logEvent(dev, f, 'notification cleared');
      dev.notes = dev.notes.filter(n => n.tag !== f.tag);
      touchDev(dev, 'notes');
      break;
    case 'synced':
      if (!dev) break;
      dev.synced = true;
      logEvent(dev, f, `synced to #${f.seq}`);
      touchDev(dev, 'info');
      break;
    case 'replay':
      if (dev) logEvent(dev, f, `from #${f.from}`);
      break;
    case 'error':
      if (dev) logEvent(dev, f, f.message);
      else console.warn('lanpush:', f.message);
      break;
    default:
      break;
  }
  if (dev && isNum(f.seq)) dev.seq = Math.max(dev.seq, f.seq);
  if (dev && ['snapshot', 'start', 'end', 'lifecycle', 'notification', 'clear', 'device'].includes(f.type)) refreshDevicesSoon();
}

function connect() {
  clearTimeout(model.retryTimer);
  if (model.ws) { const old = model.ws; model.ws = null; try { old.close(1000); } catch (e) { /* closed */ } }
  if (!model.token) { model.conn = 'need_token'; model.error = null; model.errorKind = null; touchChrome(); return; }
  const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/v1/stream';
  model.conn = 'connecting'; model.authFailed = false; model.lastRx = Date.now();
  touchChrome();
  let ws;
  try { ws = new WebSocket(url, 'lanpush.v1'); } catch (e) { return lost(null, 1006); }
  model.ws = ws;
  ws.onmessage = e => {
    if (model.ws !== ws) return;
    model.lastRx = Date.now();
    let f;
    try { f = JSON.parse(e.data); } catch (err) { return; }
    if (f && typeof f === 'object') onFrame(f);
  };
  ws.onclose = e => { if (model.ws === ws) lost(ws, e.code, e.reason); };
  ws.onerror = () => {};
}
function lost(ws, code, reason) {
  const wasOpen = model.conn === 'open' || model.conn === 'connecting' && model.retry === 0;
  model.ws = null;
  if (wasOpen || model.closeCode == null || code === 4001) model.closeCode = code;
  if (code === 4001 || model.authFailed) {
    model.conn = 'auth_error';
    model.errorKind = 'auth';
    model.error = `The gateway rejected this token (${model.error || reason || 'auth_invalid'}, close 4001). ` +
      'Enter the admin token or the viewer token from lanpush.yaml.';
  } else {
    model.conn = 'disconnected';
    model.errorKind = 'disconnected';
    const delay = Math.min(4000, 250 * Math.pow(2, model.retry));
    model.retry++;
    model.retryAt = Date.now() + delay;
    model.retryTimer = setTimeout(connect, delay);
    const first = model.closeCode;
    const what = first === 1001 ? 'the gateway shut down (close 1001)' : first === 1006 ? 'the connection failed or dropped (1006)'
      : `the connection closed with code ${first}${reason ? ' ' + reason : ''}`;
    const attempts = model.retry > 1 ? ` ${model.retry - 1} reconnect attempt${model.retry > 2 ? 's' : ''} failed so far.` : '';
    model.error = `Lost the connection to lanpushd: ${what}.${attempts} Reconnecting automatically; the cards show the last ` +
      'state received and are replaced by a fresh snapshot on reconnect.';
  }
  for (const dev of model.devices.values()) { dev.synced = false; touchDev(dev, 'info'); }
  touchChrome();
}

// ------------------------------------------------------------------ HTTP
async function api(method, path, body) {
  const headers = { Authorization: 'Bearer ' + model.token };
  const init = { method, headers, cache: 'no-store' };
  if (body !== undefined) { headers['Content-Type'] = 'application/json'; init.body = JSON.stringify(body); }
  const r = await fetch(path, init);
  let data = null;
  try { data = await r.json(); } catch (e) { data = null; }
  return { status: r.status, data };
}
let devicesInFlight = false;
async function refreshDevices() {
  if (!model.token || devicesInFlight) return;
  devicesInFlight = true;
  try {
    const { status, data } = await api('GET', '/v1/devices');
    if (status === 200 && data && Array.isArray(data.devices)) {
      for (const d of data.devices) { const dev = ensureDev(d.id, d.name); dev.info = d; dev.infoAt = Date.now(); touchDev(dev, 'info'); }
    }
  } catch (e) { /* the stream reports the outage */ } finally { devicesInFlight = false; }
}
setInterval(() => { if (model.conn === 'open' && !document.hidden) refreshDevices(); }, 3000);
let devicesSoon = null;
/** Activity counts and paths change with starts, ends and dismissals: refresh soon, at most every 300 ms. */
function refreshDevicesSoon() {
  if (devicesSoon) return;
  devicesSoon = setTimeout(() => { devicesSoon = null; refreshDevices(); }, 300);
}

// ------------------------------------------------------------------ rendering: one activity
function plainView(act) {
  const s = act.state || {};
  const bg = parseColor(s.background_color) || BLACK;
  const fg = parseColor(s.text_color) || contrastOf(bg);
  const icon = parseColor(s.color);
  const hasBar = isNum(s.progress) && isNum(s.progress_max) && s.progress_max > 0;
  const frac = hasBar ? clamp(s.progress / s.progress_max, 0, 1) : 0;
  return {
    s, bg, fg, icon, hasBar, frac,
    pct: hasBar ? Math.round(frac * 100) + '%' : null,
    bar: parseColor(s.progress_bar_color) || icon || HA_BLUE, // seed 000: falls back to the icon colour
    timer: s.chronometer === true && isNum(s.countdown_end),
    critical: typeof s.critical_text === 'string' && s.critical_text !== '' ? s.critical_text : null,
    message: typeof s.message === 'string' ? s.message : '',
    reverse: typeof s.progress_bar_direction === 'string' && /rtl|right|revers|backward|down/i.test(s.progress_bar_direction),
  };
}
function barHTML(field, frac, color, reverse) {
  return `<div class="bar" data-field="${field}" data-color="${color.hex}" data-value="${frac.toFixed(4)}"${reverse ? ' data-direction="reverse"' : ''}>` +
    `<div class="fill" data-field="${field === 'progress-bar' ? 'progress-fill' : field + '-fill'}" style="width:${(frac * 100).toFixed(2)}%;background:${color.css}"></div></div>`;
}
function lineHTML(v) {
  return v.timer ? timerSpan('timer', 'auto', v.s.countdown_end * 1000) : `<span data-field="message">${esc(v.message)}</span>`;
}
function lockPlain(act, v) {
  const trailing = v.pct != null
    ? `<div class="la-trail" data-field="trailing" data-source="progress">${v.pct}</div>`
    : v.critical != null ? `<div class="la-trail" data-field="trailing" data-source="critical_text">${esc(v.critical)}</div>` : '';
  return `<div class="la-row">${stateIcon('icon', v.s, v.icon || v.fg)}<div class="la-main">` +
    `<div class="la-title" data-field="title">${esc(act.attributes.title || '')}</div>` +
    `<div class="la-line">${lineHTML(v)}</div></div>${trailing}</div>` +
    (v.hasBar ? barHTML('progress-bar', v.frac, v.bar, v.reverse) : '');
}

function valueHTML(v, field, cls) {
  if (!v || typeof v !== 'object' || v.value == null) return '';
  const c = parseColor(v.text_color, true);
  const style = c ? `color:${c.css}` : '';
  if (v.formatter === 'time_since' || v.formatter === 'time_until') {
    const t = Date.parse(v.value);
    if (isFinite(t)) return timerSpan(field, v.formatter === 'time_since' ? 'up' : 'down', t, style, ` data-formatter="${v.formatter}"`).replace('class="timer"', `class="timer tv ${cls || ''}"`);
  }
  return `<span class="tv ${cls || ''}" data-field="${field}"${style ? ` style="${style}"` : ''}>${esc(v.value)}</span>`;
}
function trackBackground(track, hatched) {
  const base = track || mkColor(142, 142, 147);
  if (hatched) return `repeating-linear-gradient(135deg, ${withAlpha(base, 0.85)} 0 2px, ${withAlpha(base, 0.18)} 2px 6px)`;
  return withAlpha(base, track ? 0.55 : 0.35);
}
function templateBar(p, fallback) {
  if (!p || typeof p !== 'object') return '';
  const value = clamp(+p.value || 0, 0, 1);
  if (p.style === 'segmented' && Array.isArray(p.segments)) {
    const display = p.display === 'layered' ? 'layered' : 'split';
    let start = 0;
    const segs = [], fills = [], labels = [];
    p.segments.forEach((g, i) => {
      const share = Math.max(0, +g.value || 0);
      const fill = parseColor(g.fill_color, true) || fallback;
      const hatched = g.track_fill === 'hatched';
      const track = trackBackground(parseColor(g.track_color, true), hatched);
      const within = share > 0 ? clamp((value - start) / share, 0, 1) : 0;
      const attrs = `data-segment data-index="${i}" data-share="${share}" data-fill-color="${fill.hex}" ` +
        `data-track-fill="${hatched ? 'hatched' : 'solid'}" data-filled="${within.toFixed(3)}" style="flex:${share} 1 0"`;
      if (display === 'split') {
        segs.push(`<div class="seg" ${attrs}><div class="seg-track" style="background:${track}"></div>` +
          `<div class="seg-fill" style="width:${(within * 100).toFixed(2)}%;background:${fill.css}"></div></div>`);
      } else {
        segs.push(`<div class="zone" ${attrs}><div class="seg-track" style="background:${track}"></div></div>`);
        fills.push(`<div class="zone" style="flex:${share} 1 0;background:${fill.css}"></div>`);
      }
      labels.push(`<div class="seg-label" data-field="segment-label" data-index="${i}" style="flex:${share} 1 0">${esc(g.label || '')}</div>`);
      start += share;
    });
    const layered = display === 'layered'
      ? `<div class="zones">${segs.join('')}</div><div class="zones fills" style="clip-path:inset(0 ${(100 - value * 100).toFixed(2)}% 0 0)">${fills.join('')}</div>`
      : segs.join('');
    const hasLabels = p.segments.some(g => g.label);
    return `<div class="segbar ${display}" data-field="segments" data-style="segmented" data-display="${display}" ` +
      `data-count="${p.segments.length}" data-value="${value}">${layered}</div>` +
      (hasLabels ? `<div class="seg-labels ${display}">${labels.join('')}</div>` : '');
  }
  const color = parseColor(p.color, true) || fallback;
  return barHTML('template-bar', value, color).replace('class="bar"', 'class="bar tbar" data-style="simple"');
}
function templateColor(t, fg) {
  const spec = t.icon;
  return (spec && typeof spec === 'object' && parseColor(spec.primary_color, true)) || AIVI_BLUE;
}
/** Lock Screen (and expanded) content of an Aivi template; compact trailing; progress value for the minimal ring. */
function templateView(act, fg) {
  const t = act.state.template;
  const accent = templateColor(t, fg);
  if (t.template === 'progress') {
    const p = t.progress || {};
    const foot = t.footer_left || t.footer_right
      ? `<div class="tp-foot"><span class="grow">${valueHTML(t.footer_left, 'footer-left')}</span>${valueHTML(t.footer_right, 'footer-right')}</div>` : '';
    return {
      body: `<div class="tpl tp" data-region="template-progress" data-style="${p.style === 'segmented' ? 'segmented' : 'simple'}"` +
        `${p.style === 'segmented' ? ` data-display="${p.display === 'layered' ? 'layered' : 'split'}"` : ''}>` +
        `<div class="tp-head">${templateIcon('icon', t.icon, fg)}<span class="grow">${valueHTML(t.header_left, 'header-left', 'big')}</span>` +
        `${valueHTML(t.header_right, 'header-right')}</div>${templateBar(p, accent)}${foot}</div>`,
      compact: t.compact_value ? valueHTML(t.compact_value, 'compact-trailing')
        : t.header_right ? valueHTML(t.header_right, 'compact-trailing')
          : `<span data-field="compact-trailing">${Math.round(clamp(+p.value || 0, 0, 1) * 100)}%</span>`,
      ring: clamp(+p.value || 0, 0, 1), ringColor: parseColor(p.color, true) || accent,
    };
  }
  if (t.template === 'monitor') {
    const primary = t.primary_column === 'right' ? 'right' : 'left';
    const cols = ['left', 'right'].filter(k => t[k + '_column']).map(k => {
      const c = t[k + '_column'];
      const isP = k === primary;
      return `<div class="tm-col${isP ? ' primary' : ''}" data-column="${k}" data-primary="${isP}">` +
        (c.header ? `<div class="tm-h" data-field="column-header">${esc(c.header)}</div>` : '') +
        `<div class="tm-v">${valueHTML(c.value, 'column-value')}</div>` +
        (c.footer ? `<div class="tm-f" data-field="column-footer">${esc(c.footer)}</div>` : '') + '</div>';
    });
    const pc = t[primary + '_column'] || t.left_column || t.right_column;
    return {
      body: `<div class="tpl tm" data-region="template-monitor" data-primary-column="${primary}">${templateIcon('icon', t.icon, fg)}` +
        `<div class="tm-cols" data-count="${cols.length}">${cols.join('')}</div></div>`,
      compact: pc ? valueHTML(pc.value, 'compact-trailing') : '', ring: null,
    };
  }
  // generic (legacy): bar, state, remaining time
  const value = clamp(+t.progress || 0, 0, 1);
  const rem = act.remaining
    ? `<div class="tg-rem">${timerSpan('remaining', 'down', act.remaining.end)} left</div>` : '';
  return {
    body: `<div class="tpl tg" data-region="template-generic"><div class="tg-row">${templateIcon('icon', t.icon, fg)}` +
      `<div class="grow"><div class="tg-state" data-field="generic-state">${esc(t.state || '')}</div>${rem}</div>` +
      `<div class="tg-pct" data-field="generic-percent">${Math.round(value * 100)}%</div></div>` +
      `${barHTML('template-bar', value, accent).replace('class="bar"', 'class="bar tbar" data-style="generic"')}</div>`,
    compact: act.remaining ? timerSpan('compact-trailing', 'down', act.remaining.end)
      : `<span data-field="compact-trailing">${Math.round(value * 100)}%</span>`,
    ring: value, ringColor: accent,
  };
}
function isTemplate(act) {
  const t = act.state && act.state.template;
  return !!(t && typeof t === 'object' && ['progress', 'monitor', 'generic'].includes(t.template));
}

function badgeHTML(act) {
  if (act.phase === 'stale') return `<div class="badge stale" data-field="phase-badge">Stale · waiting for an update</div>`;
  if (act.phase === 'ended') {
    return `<div class="badge ended" data-field="phase-badge">Ended` +
      (isNum(act.dismissal_date) ? ` · dismissed in ${timerSpan('dismissal', 'down', act.dismissal_date * 1000)}` : '') + '</div>';
  }
  return '';
}
function alertHTML(act) {
  if (!act.alert || Date.now() > act.alertUntil) return '';
  return `<div class="la-alert" data-field="alert"><b>${esc(act.alert.title || '')}</b> ${esc(act.alert.body || '')}</div>`;
}
function lockHTML(act) {
  const v = plainView(act);
  let inner, style;
  if (isTemplate(act)) {
    inner = templateView(act, v.fg).body;
  } else inner = lockPlain(act, v);
  style = `background:${v.bg.css};color:${v.fg.css}`;
  return `${badgeHTML(act)}${alertHTML(act)}<div class="la-card" data-field="card" data-background="${v.bg.hex}" ` +
    `data-text-color="${v.fg.hex}" style="${style}">${inner}</div>`;
}

function minimalHTML(act, v, tv, region) {
  let ring = '';
  const frac = tv ? tv.ring : v.hasBar ? v.frac : null;
  const color = tv ? tv.ringColor : v.bar;
  if (frac != null) ring = `<div class="ring" data-field="minimal-ring" data-value="${frac.toFixed(3)}" style="background:conic-gradient(${color.css} ${(frac * 360).toFixed(1)}deg, rgba(255,255,255,.16) 0)"></div>`;
  const icon = tv ? templateIcon('minimal-icon', act.state.template.icon, WHITE) || glyph('minimal-icon', '', null, WHITE)
    : stateIcon('minimal-icon', v.s, v.icon || WHITE);
  return `<div class="di di-minimal" data-region="${region}" data-tag="${esc(act.tag)}">${ring}<div class="ring-hole">${icon}</div></div>`;
}
function compactHTML(act, v, tv, region) {
  let lead, trail;
  if (tv) {
    lead = templateIcon('compact-icon', act.state.template.icon, WHITE) || glyph('compact-icon', '', null, WHITE);
    trail = tv.compact;
  } else {
    lead = stateIcon('compact-icon', v.s, v.icon || WHITE);
    // seed 000: the compact Dynamic Island always shows critical_text (the timer or the percentage only without it)
    const tint = v.icon ? ` style="color:${v.icon.css}"` : '';
    trail = v.critical != null ? `<span data-field="compact-trailing" data-source="critical_text"${tint}>${esc(v.critical)}</span>`
      : v.timer ? timerSpan('compact-trailing', 'auto', v.s.countdown_end * 1000, v.icon ? `color:${v.icon.css}` : '', ' data-source="timer"')
        : v.pct != null ? `<span data-field="compact-trailing" data-source="progress"${tint}>${v.pct}</span>` : '';
  }
  return `<div class="di di-compact" data-region="${region}" data-tag="${esc(act.tag)}"><span class="di-lead">${lead}</span>` +
    `<span class="di-cam"></span><span class="di-trail">${trail}</span></div>`;
}
function expandedHTML(act, v, tv) {
  let inner;
  if (tv) inner = tv.body;
  else {
    const trailing = v.pct != null ? `<div class="dx-trail" data-field="expanded-trailing" data-source="progress">${v.pct}</div>`
      : v.critical != null ? `<div class="dx-trail" data-field="expanded-trailing" data-source="critical_text">${esc(v.critical)}</div>` : '';
    inner = `<div class="dx-top">${stateIcon('expanded-icon', v.s, v.icon || WHITE)}<div class="grow">` +
      `<div class="dx-title" data-field="expanded-title">${esc(act.attributes.title || '')}</div>` +
      `<div class="dx-line">${lineHTML(v)}</div></div>${trailing}</div>` + (v.hasBar ? barHTML('progress-bar', v.frac, v.bar, v.reverse) : '');
  }
  return `<div class="di di-expanded" data-region="island-expanded" data-tag="${esc(act.tag)}">${inner}</div>`;
}
function metaHTML(dev, act) {
  const s = act.state || {};
  const bits = [`<code>${esc(act.tag)}</code>`, `seq ${esc(act.seq)}`, `phase <b data-field="phase">${esc(act.phase)}</b>`];
  bits.push(`relevance ${isNum(act.relevance_score) ? act.relevance_score : '—'}`);
  if (isNum(act.stale_date)) bits.push(`stale ${relTime(act.stale_date)}`);
  if (act.phase === 'ended' && isNum(act.dismissal_date)) bits.push(`dismissal ${relTime(act.dismissal_date)}`);
  if (s.icon && !isTemplate(act)) {
    const name = String(s.icon).replace(/^mdi:/, '');
    bits.push(`icon ${esc(s.icon)}${hasGlyph(name) ? '' : ' <i>(fallback glyph)</i>'}`);
  }
  if (s.url) bits.push(`tap → ${esc(s.url)}`);
  if (isTemplate(act) && s.template.tap_url) bits.push(`tap → ${esc(s.template.tap_url)}`);
  if (act.attributes.started_at) bits.push(`started ${relTime(act.attributes.started_at)}`);
  return `<div class="meta" data-field="meta"><span class="pres-title">${esc(act.attributes.title || act.tag)}</span> ${bits.join(' · ')}` +
    `<span class="acts"><button type="button" data-action="end" data-device-id="${esc(dev.id)}" data-tag="${esc(act.tag)}" ` +
    `${act.phase === 'ended' ? 'disabled' : ''}>End</button><button type="button" data-action="dismiss" ` +
    `data-device-id="${esc(dev.id)}" data-tag="${esc(act.tag)}">Dismiss</button></span></div>`;
}
function renderActivity(dev, act) {
  if (!act.el) {
    const lock = document.createElement('article');
    lock.className = 'la';
    lock.setAttribute('data-activity', '');
    lock.setAttribute('data-region', 'lock-screen');
    const pres = document.createElement('div');
    pres.className = 'pres';
    pres.setAttribute('data-activity-presentations', '');
    act.el = { lock, pres };
  }
  const tpl = isTemplate(act) ? act.state.template.template : 'none';
  for (const el of [act.el.lock, act.el.pres]) {
    el.dataset.deviceId = dev.id;
    el.dataset.tag = act.tag;
    el.dataset.phase = act.phase;
    el.dataset.template = tpl;
    el.dataset.seq = act.seq;
    el.dataset.relevance = isNum(act.relevance_score) ? act.relevance_score : '';
  }
  act.el.lock.innerHTML = lockHTML(act);
  const v = plainView(act);
  const tv = tpl !== 'none' ? templateView(act, WHITE) : null;
  act.el.pres.innerHTML = metaHTML(dev, act) +
    `<div class="pres-row"><figure><figcaption>compact</figcaption>${compactHTML(act, v, tv, 'island-compact')}</figure>` +
    `<figure><figcaption>minimal</figcaption>${minimalHTML(act, v, tv, 'island-minimal')}</figure></div>` +
    `<figure><figcaption>expanded</figcaption>${expandedHTML(act, v, tv)}</figure>`;
  act.rendered = { v, tv };
}

// ------------------------------------------------------------------ rendering: one device
function relevanceOrder(dev) {
  return Array.from(dev.acts.values()).sort((a, b) =>
    (isNum(b.relevance_score) ? b.relevance_score : 0) - (isNum(a.relevance_score) ? a.relevance_score : 0) ||
    ((b.attributes.started_at || 0) - (a.attributes.started_at || 0)) || (a.tag < b.tag ? -1 : 1));
}
function ensureDevEl(dev) {
  if (dev.el) return dev.el;
  const sec = document.createElement('section');
  sec.className = 'device';
  sec.dataset.deviceId = dev.id;
  sec.innerHTML = `<header class="dev-head"><h2 data-field="device-name"></h2>` +
    `<div class="status" data-region="device-status" data-device-id="${esc(dev.id)}"></div></header>` +
    `<div class="dev-body"><div class="phone" data-region="phone" data-device-id="${esc(dev.id)}">` +
    `<div class="island-row" data-region="island"></div>` +
    `<div class="lock-time"><div data-field="date"></div><div class="big" data-field="clock"></div></div>` +
    `<div class="stack" data-region="lock-stack"></div><div class="notes" data-region="notifications"></div>` +
    `<div class="empty" data-field="empty">No Live Activities</div></div>` +
    `<div class="side"><h3>Dynamic Island presentations <small>by relevance</small></h3>` +
    `<div class="pres-list" data-region="presentations"></div><p class="none" data-field="presentations-empty">none</p>` +
    `<h3>Event log <small>last ${LOG_LIMIT}, newest first</small></h3>` +
    `<ol class="log" data-region="event-log" data-device-id="${esc(dev.id)}"></ol></div></div>`;
  const list = $('[data-region="devices"]');
  const after = Array.from(list.children).find(c => c.dataset.deviceId > dev.id);
  list.insertBefore(sec, after || null);
  $('[data-field="waiting"]') && ($('[data-field="waiting"]').hidden = true);
  dev.el = { sec, status: $('[data-region="device-status"]', sec), name: $('[data-field="device-name"]', sec),
    stack: $('[data-region="lock-stack"]', sec), pres: $('[data-region="presentations"]', sec), island: $('[data-region="island"]', sec),
    log: $('[data-region="event-log"]', sec), presEmpty: $('[data-field="presentations-empty"]', sec), notes: $('[data-region="notifications"]', sec), empty: $('[data-field="empty"]', sec) };
  tickClock(sec);
  return dev.el;
}
function statusHTML(dev) {
  const i = dev.info;
  const chips = [];
  if (!i) chips.push('<span class="chip" data-field="path">state unknown</span>');
  else {
    const label = i.path === 'lan' ? `LAN · ${i.sessions} session${i.sessions === 1 ? '' : 's'}`
      : i.path === 'relay' ? 'relay (no LAN session)' : 'no path (no LAN session, no relay)';
    chips.push(`<span class="chip ${esc(i.path)}" data-field="path" title="how a change reaches this device now">${esc(label)}</span>`);
    chips.push(`<span class="chip" data-field="activity-count">${esc(i.activities)} activit${i.activities === 1 ? 'y' : 'ies'}</span>`);
    if (i.queued_notifications) chips.push(`<span class="chip">${esc(i.queued_notifications)} queued notifications</span>`);
    if (i.registration) chips.push(`<span class="chip" title="${esc(i.registration.push_url || '')}">push_token …${esc(String(i.registration.push_token).slice(-6))}</span>`);
    if (i.live_activity_tokens) chips.push(`<span class="chip">${esc(i.live_activity_tokens)} activity tokens</span>`);
    if (i.push_to_start_token) chips.push('<span class="chip">push-to-start token</span>');
    if (isNum(i.last_seen) && !i.connected) chips.push(`<span class="chip">last seen ${esc(relTime(i.last_seen))}</span>`);
  }
  chips.push(`<span class="chip ${dev.synced ? 'lan' : ''}" data-field="stream" title="this page's observer stream">` +
    `${dev.synced ? 'preview synced' : 'preview syncing'} · #${esc(dev.seq)}</span>`);
  return chips.join('');
}
function renderDevice(dev) {
  const el = ensureDevEl(dev);
  if (dev.dirty.info) {
    el.name.innerHTML = `${esc(dev.name)} <small>${esc(dev.id)}</small>`;
    const i = dev.info;
    el.status.dataset.path = i ? i.path : 'unknown';
    el.status.dataset.connected = i ? String(!!i.connected) : 'unknown';
    el.status.dataset.sessions = i ? String(i.sessions) : '';
    el.status.innerHTML = statusHTML(dev);
  }
  for (const r of dev.removed) { r.lock.remove(); r.pres.remove(); }
  dev.removed = [];
  for (const tag of dev.dirtyActs) { const act = dev.acts.get(tag); if (act) renderActivity(dev, act); }
  const anyActs = dev.dirtyActs.size > 0;
  if (dev.dirty.order || anyActs) {
    const order = relevanceOrder(dev);
    for (const [box, key] of [[el.stack, 'lock'], [el.pres, 'pres']]) {
      const want = order.filter(a => a.el).map(a => a.el[key]);
      const have = Array.from(box.children);
      if (want.length !== have.length || want.some((w, i) => w !== have[i])) for (const w of want) box.appendChild(w);
    }
    // The island: the most relevant live activity compact, the next one minimal (ended ones leave the island).
    const live = order.filter(a => a.phase !== 'ended' && a.rendered);
    el.island.innerHTML = live.length
      ? compactHTML(live[0], live[0].rendered.v, live[0].rendered.tv, 'island-live-compact') +
        (live[1] ? minimalHTML(live[1], live[1].rendered.v, live[1].rendered.tv, 'island-live-minimal') : '')
      : '<div class="di island-idle"></div>';
    el.empty.hidden = order.length > 0;
    el.presEmpty.hidden = order.length > 0;
    el.sec.dataset.activities = String(order.length);
  }
  if (dev.dirty.log) {
    const rows = dev.log.slice(-LOG_LIMIT).reverse().map(e =>
      `<li data-log-entry data-type="${esc(e.type)}" data-seq="${esc(e.seq == null ? '' : e.seq)}" data-tag="${esc(e.tag)}">` +
      `<time>${clockTime(e.at)}.${String(e.at % 1000).padStart(3, '0')}</time> <b class="t-${esc(e.type)}">${esc(e.type)}</b>` +
      `${e.tag ? ` <span class="tag">${esc(e.tag)}</span>` : ''}${e.seq != null ? ` <span class="seq">#${esc(e.seq)}</span>` : ''}` +
      `${e.detail ? ` <code>${esc(e.detail)}</code>` : ''}</li>`);
    el.log.innerHTML = rows.join('') || '<li class="none">no events yet</li>';
  }
  if (dev.dirty.notes) {
    el.notes.innerHTML = dev.notes.map(n => `<div class="note" data-notification data-tag="${esc(n.tag)}">` +
      `<div class="note-app">HOME ASSISTANT <span>${clockTime(n.at).slice(0, 5)}</span></div>` +
      `<div class="note-title">${esc(n.title)}</div><div class="note-body">${esc(n.message)}</div></div>`).join('');
  }
  dev.dirty = { info: false, log: false, notes: false, order: false };
  dev.dirtyActs.clear();
}

// ------------------------------------------------------------------ rendering: the page
const CONN_TEXT = {
  idle: 'Starting…', need_token: 'Enter a token', connecting: 'Connecting…', open: 'Live',
  auth_error: 'Token rejected', disconnected: 'Disconnected',
};
function renderChrome() {
  document.body.dataset.connState = model.conn;
  const pill = $('[data-region="connection"]');
  pill.dataset.connState = model.conn;
  let text = CONN_TEXT[model.conn] || model.conn;
  if (model.conn === 'open') text = `Live · observer · ${model.devices.size} device${model.devices.size === 1 ? '' : 's'}`;
  if (model.conn === 'disconnected') {
    const s = Math.max(0, Math.ceil((model.retryAt - Date.now()) / 1000));
    text = `Disconnected · retry ${model.retry}${s > 0 ? ` in ${s} s` : ' now'}`;
  }
  $('[data-field="conn-text"]', pill).textContent = text;
  const banner = $('[data-region="error"]');
  banner.hidden = !model.error || (model.conn !== 'auth_error' && model.conn !== 'disconnected');
  banner.dataset.errorKind = model.errorKind || '';
  banner.dataset.closeCode = model.closeCode == null ? '' : model.closeCode;
  $('[data-field="error-text"]', banner).textContent = model.error || '';
  const waiting = $('[data-field="waiting"]');
  if (waiting && !model.devices.size) {
    waiting.textContent = model.conn === 'auth_error' || model.conn === 'need_token' ? 'Enter the admin or viewer token to see the devices.'
      : model.conn === 'disconnected' ? 'The gateway is not reachable yet.' : "Waiting for the gateway's snapshot…";
  }
  const form = $('[data-region="token-form"]');
  form.dataset.needed = String(model.conn === 'auth_error' || model.conn === 'need_token');
  $('[data-field="stats"]').textContent = `${model.frames} frames · ${model.renders} renders` +
    (model.mdi ? ` · MDI ${model.mdi.version || ''} (${model.mdi.count} glyphs)` : ' · no MDI font: fallback glyphs');
  $('[data-field="stats"]').dataset.frames = model.frames;
}
function renderTargets() {
  const sel = $('[data-field="target"]');
  const keep = sel.value;
  const ids = Array.from(model.devices.keys()).sort();
  sel.innerHTML = '<option value="all">all devices</option>' +
    ids.map(id => `<option value="${esc(id)}">${esc(model.devices.get(id).name)} (${esc(id)})</option>`).join('');
  sel.value = ids.includes(keep) ? keep : 'all';
}
function flush() {
  if (!scheduled) return;
  scheduled = false;
  model.renders++;
  if (dirty.targets) { renderTargets(); dirty.targets = false; }
  for (const id of dirty.devices) { const dev = model.devices.get(id); if (dev) renderDevice(dev); }
  dirty.devices.clear();
  renderChrome();
  dirty.chrome = false;
}

// ------------------------------------------------------------------ live timers
function tickClock(root) {
  const d = new Date();
  for (const el of $$('[data-field="clock"]', root)) el.textContent = `${d.getHours()}:${pad(d.getMinutes())}`;
  const date = d.toLocaleDateString(undefined, { weekday: 'long', day: 'numeric', month: 'long' });
  for (const el of $$('[data-field="date"]', root)) el.textContent = date;
}
setInterval(() => {
  const now = Date.now();
  for (const el of document.querySelectorAll('[data-timer]')) {
    const t = +el.dataset.t, mode = el.dataset.timer;
    const text = timerText(mode, t, now);
    if (el.textContent !== text) el.textContent = text;
    const counting = timerMode(mode, t, now);
    if (el.dataset.counting !== counting) el.dataset.counting = counting;
  }
  for (const dev of model.devices.values()) {
    for (const act of dev.acts.values()) if (act.alert && now > act.alertUntil) { act.alert = null; touchAct(dev, act.tag); }
  }
  if (model.conn === 'disconnected') touchChrome();
  // A silent network loss: the server pings at the WebSocket level; an idle stream still answers our pings.
  if (model.conn === 'open' && model.ws) {
    if (now - model.lastRx > 25000) { const ws = model.ws; model.ws = null; try { ws.close(); } catch (e) { /* gone */ } lost(ws, 1006); }
    else if (now - model.lastRx > 10000 && now - (model.lastPing || 0) > 10000) { model.lastPing = now; send({ type: 'ping' }); }
  }
}, 250);
setInterval(() => tickClock(document), 1000);

// ------------------------------------------------------------------ send test payloads
const iso = secs => new Date(Date.now() + secs * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
const SAMPLES = [
  { id: 'washer-start', label: 'Washing machine: progress + timer (seed 000)', body: () => ({ title: 'Washing Machine', message: 'Rinsing · 1 of 2',
    data: { tag: 'washer_cycle', live_update: true, progress: 900, progress_max: 3600, chronometer: true, when: 2700, when_relative: true,
      notification_icon: 'mdi:washing-machine', notification_icon_color: '#2196F3', color: '#2196F3' } }) },
  { id: 'washer-done', label: 'Washing machine: cycle complete (update)', body: () => ({ title: 'Washing Machine', message: 'Cycle complete',
    data: { tag: 'washer_cycle', live_update: true, progress: 3600, progress_max: 3600, notification_icon: 'mdi:washing-machine',
      notification_icon_color: '#4CAF50', color: '#4CAF50' } }) },
  { id: 'washer-colors', label: 'Washing machine: custom colors', body: () => ({ title: 'Washing Machine', message: 'Cycle complete',
    data: { tag: 'washer_cycle', live_update: true, background_color: '#101820', text_color: '#FFFFFF', url: '/lovelace/laundry' } }) },
  { id: 'washer-end', label: 'Washing machine: end (clear_notification)', body: () => ({ message: 'clear_notification', data: { tag: 'washer_cycle' } }) },
  { id: 'dryer', label: 'Laundry: drying timer (chronometer)', body: () => ({ title: 'Laundry', message: 'Drying',
    data: { tag: 'dryer', live_update: true, chronometer: true, when: 3600, when_relative: true } }) },
  { id: 'ev', label: 'EV charging (seed 000)', body: () => ({ title: 'EV Charging', message: 'Charging · Est. 45 min remaining',
    data: { tag: 'ev-charging', live_update: true, critical_text: '45%', progress: 45, progress_max: 100,
      notification_icon: 'mdi:ev-station', notification_icon_color: '#4CAF50' } }) },
  { id: 'dishwasher', label: 'Dishwasher progress (seed 000)', body: () => ({ title: 'Dishwasher', message: 'Pre-wash in progress',
    data: { tag: 'dishwasher', live_update: true, critical_text: 'Pre-wash', progress: 20, progress_max: 100,
      notification_icon: 'mdi:dishwasher', notification_icon_color: '#26C6DA' } }) },
  { id: 'all-fields', label: 'All Fields (seed 000 anatomy)', body: () => ({ message: 'All content state fields active', title: 'All Fields',
    data: { tag: 'debug-all', live_update: true, critical_text: '5 min', progress: 42, progress_max: 100, chronometer: true, when: 300,
      when_relative: true, notification_icon: 'mdi:home-assistant', notification_icon_color: '#03A9F4' } }) },
  { id: 'all-fields-end', label: 'All Fields: end (clear_notification)', body: () => ({ message: 'clear_notification', data: { tag: 'debug-all' } }) },
  { id: 'aivi-simple', label: 'Aivi progress: simple bar', body: () => ({ title: 'Washer', data: { tag: 'aivi-washer', live_update: true,
    template: { template: 'progress', icon: 'washer', header_left: { value: 'In progress', text_color: 'green' }, header_right: { value: '1h 32m' },
      progress: { style: 'simple', value: 0.65, color: 'blue' }, footer_left: { value: 'Progress' }, footer_right: { value: '65%' } } } }) },
  { id: 'aivi-layered', label: 'Aivi progress: segmented, layered, hatched', body: () => ({ title: 'Supercharger', data: { tag: 'aivi-charging', live_update: true,
    template: { template: 'progress', icon: 'bolt.car', header_left: { value: '90%', text_color: 'green' }, header_right: { value: '3 min left' },
      progress: { style: 'segmented', value: 0.9, display: 'layered', segments: [
        { value: 0.8, fill_color: 'green', track_color: 'gray', label: 'Standard' },
        { value: 0.2, fill_color: 'green', track_color: 'gray', track_fill: 'hatched', label: 'Extended' }] },
      footer_left: { value: 'Supercharger', text_color: 'gray' }, footer_right: { value: 'Est. $4.85' }, compact_value: { value: '90%' } } } }) },
  { id: 'aivi-split', label: 'Aivi progress: segmented, split', body: () => ({ title: 'Dishwasher', data: { tag: 'aivi-dishwasher', live_update: true,
    template: { template: 'progress', icon: 'dishwasher', header_left: { value: 'Rinsing' }, header_right: { value: '48 min left' },
      progress: { style: 'segmented', value: 0.6, display: 'split', segments: [
        { value: 0.5, fill_color: 'cyan', label: 'Wash' }, { value: 0.25, fill_color: 'teal', label: 'Rinse' },
        { value: 0.25, fill_color: 'orange', track_color: 'orange', track_fill: 'hatched', label: 'Dry' }] },
      compact_value: { value: '60%' } } } }) },
  { id: 'aivi-monitor', label: 'Aivi monitor: robot vacuum', body: () => ({ title: 'Vacuum', data: { tag: 'aivi-vacuum', live_update: true,
    template: { template: 'monitor', icon: 'robotic.vacuum.and.ellipsis', left_column: { value: { value: 'Mopping', text_color: 'indigo' }, footer: 'In living room' },
      right_column: { value: { value: '20.1 m²' }, footer: 'Battery: 87%' } } } }) },
  { id: 'aivi-monitor-timers', label: 'Aivi monitor: time_since / time_until', body: () => ({ title: 'Oven', data: { tag: 'aivi-oven', live_update: true,
    template: { template: 'monitor', icon: { name: 'oven', rendering_mode: 'palette', primary_color: 'orange', secondary_color: 'red', color_rendering: 'gradient' },
      left_column: { header: 'Preheated', value: { value: iso(-420), formatter: 'time_since' }, footer: 'ago' },
      right_column: { header: 'Ready in', value: { value: iso(1500), formatter: 'time_until', text_color: 'orange' }, footer: 'Roast chicken' },
      primary_column: 'right' } } }) },
  { id: 'aivi-generic', label: 'Aivi generic: bar, state, remaining time', body: () => ({ title: 'Washer', data: { tag: 'aivi-generic', live_update: true,
    template: { template: 'generic', progress: 0.35, state: 'In progress', icon: 'washer', remaining_time: 2120 } } }) },
  { id: 'notification', label: 'Plain notification', body: () => ({ title: 'Front door', message: 'Someone is at the door', data: { tag: 'doorbell' } }) },
];
function fillSample() {
  const s = SAMPLES.find(x => x.id === $('[data-field="sample"]').value) || SAMPLES[0];
  $('[data-field="payload"]').value = JSON.stringify(s.body(), null, 2);
}
function showResult(status, data, note) {
  const out = $('[data-field="send-result"]');
  out.dataset.status = status;
  out.className = 'result ' + (status >= 200 && status < 300 ? 'ok' : 'bad');
  out.textContent = `${note || ''}${status ? 'HTTP ' + status + '\n' : ''}${data == null ? '' : JSON.stringify(data, null, 2)}`;
}
async function sendPayload() {
  let body;
  try { body = JSON.parse($('[data-field="payload"]').value); } catch (e) { return showResult(0, null, 'Not valid JSON: ' + e.message + '\n'); }
  const target = $('[data-field="target"]').value;
  if (body && typeof body === 'object' && !Array.isArray(body) && target && target !== 'all') body.targets = [target];
  try {
    const { status, data } = await api('POST', '/v1/push', body);
    showResult(status, data, status === 401 ? 'POST /v1/push needs the admin token (a viewer token is read-only)\n' : 'POST /v1/push → ');
  } catch (e) { showResult(0, null, 'The gateway did not answer: ' + e.message + '\n'); }
  refreshDevices();
}
async function endActivities(tag, device, dismissal) {
  const q = new URLSearchParams({ dismissal });
  if (device && device !== 'all') q.set('device', device);
  try {
    const { status, data } = await api('DELETE', `/v1/activities${tag ? '/' + encodeURIComponent(tag) : ''}?${q}`);
    showResult(status, data, `DELETE /v1/activities${tag ? '/' + tag : ''} → `);
  } catch (e) { showResult(0, null, 'The gateway did not answer: ' + e.message + '\n'); }
}

// ------------------------------------------------------------------ start
function init() {
  const sel = $('[data-field="sample"]');
  sel.innerHTML = SAMPLES.map(s => `<option value="${s.id}">${esc(s.label)}</option>`).join('');
  sel.addEventListener('change', fillSample);
  fillSample();
  $('[data-action="send"]').addEventListener('click', sendPayload);
  $('[data-action="end-all"]').addEventListener('click', () => endActivities(null, $('[data-field="target"]').value, 'default'));
  $('[data-action="reset-sample"]').addEventListener('click', fillSample);
  document.addEventListener('click', e => {
    const b = e.target.closest('button[data-action="end"], button[data-action="dismiss"]');
    if (b) endActivities(b.dataset.tag, b.dataset.deviceId, b.dataset.action === 'end' ? 'default' : 'immediate');
  });
  $('[data-region="token-form"]').addEventListener('submit', e => {
    e.preventDefault();
    const v = $('[data-field="token"]').value.trim();
    if (!v) return;
    model.token = v;
    $('[data-field="token"]').value = '';
    model.retry = 0;
    connect();
  });
  $('[data-action="forget"]').addEventListener('click', () => {
    try { localStorage.removeItem(TOKEN_KEY); } catch (e) { /* private mode */ }
    model.token = null;
    connect();
  });
  document.addEventListener('visibilitychange', () => { if (!document.hidden) { schedule(); refreshDevices(); } });

  const params = new URLSearchParams(location.search);
  let token = params.get('token');
  if (token) {
    params.delete('token');
    const rest = params.toString();
    history.replaceState(null, '', location.pathname + (rest ? '?' + rest : '') + location.hash);
  } else {
    try { token = localStorage.getItem(TOKEN_KEY); } catch (e) { token = null; }
  }
  model.token = token || null;
  fetch('/preview/mdi.json', { cache: 'force-cache' }).then(r => (r.ok ? r.json() : null)).then(m => {
    if (!m || !m.icons) return;
    model.mdi = m;
    for (const dev of model.devices.values()) for (const tag of dev.acts.keys()) touchAct(dev, tag);
    touchChrome();
  }).catch(() => {}).finally(() => { document.body.dataset.mdi = model.mdi ? 'font' : 'fallback'; });
  connect();
  touchChrome();
}
window.lanpushPreview = { model, flush: () => { scheduled = true; flush(); } };
init();
})();
"""#
}
