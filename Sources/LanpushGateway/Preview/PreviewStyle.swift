/// The live preview's stylesheet: a dark tool page around phone-sized Lock Screen mock-ups and Dynamic
/// Island pills (sizes after an iPhone 15: 393 pt wide screen, 126×37 pt island).
enum PreviewStyle {
    static let source = #"""
@font-face { font-family: "lanpush-mdi"; src: url("/preview/mdi-font"); font-display: block; }
:root {
  color-scheme: dark;
  --bg: #0d1117; --panel: #161b22; --line: #2b323d; --muted: #8b949e; --text: #e6edf3;
  --ok: #3fb950; --warn: #d29922; --bad: #f85149; --accent: #58a6ff;
  font-family: -apple-system, BlinkMacSystemFont, "SF Pro Text", "Segoe UI", Roboto, "Helvetica Neue", "DejaVu Sans", Arial, sans-serif;
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--text); font-size: 14px; }
code, pre, textarea, .log { font-family: ui-monospace, "SF Mono", Menlo, "DejaVu Sans Mono", monospace; }
h3 { font-size: 13px; text-transform: uppercase; letter-spacing: .06em; color: var(--muted); margin: 4px 0 8px; font-weight: 600; }
h3 small { text-transform: none; letter-spacing: 0; font-weight: 400; }
[hidden] { display: none !important; }

header.top { display: flex; gap: 14px; align-items: center; padding: 10px 18px; border-bottom: 1px solid var(--line);
  background: var(--panel); position: sticky; top: 0; z-index: 10; flex-wrap: wrap; }
.brand { font-weight: 700; font-size: 16px; }
.brand span { color: var(--muted); font-weight: 500; }
.conn { display: flex; align-items: center; gap: 8px; padding: 4px 12px; border-radius: 999px; background: #0b0f14; border: 1px solid var(--line); }
.conn .dot { width: 9px; height: 9px; border-radius: 50%; background: var(--muted); }
.conn[data-conn-state=open] .dot { background: var(--ok); box-shadow: 0 0 8px var(--ok); }
.conn[data-conn-state=connecting] .dot { background: var(--warn); }
.conn[data-conn-state=disconnected] .dot, .conn[data-conn-state=auth_error] .dot { background: var(--bad); }
form.token { margin-left: auto; display: flex; gap: 6px; }
form.token[data-needed=true] input { border-color: var(--bad); box-shadow: 0 0 0 2px rgba(248,81,73,.25); }
input, select, textarea, button { font: inherit; color: inherit; background: #0b0f14; border: 1px solid var(--line); border-radius: 6px; padding: 5px 9px; }
button { cursor: pointer; background: #21262d; }
button:disabled { opacity: .4; cursor: default; }
button.primary { background: #1f6feb; border-color: #1f6feb; color: #fff; }
.banner { margin: 12px 18px 0; padding: 10px 14px; border-radius: 8px; border: 1px solid var(--bad); background: rgba(248,81,73,.12); }
.banner[data-error-kind=disconnected] { border-color: var(--warn); background: rgba(210,153,34,.12); }

main { display: grid; grid-template-columns: minmax(0, 1fr) 370px; gap: 18px; padding: 18px; align-items: start; }
@media (max-width: 1150px) { main { grid-template-columns: 1fr; } }
.waiting { color: var(--muted); }
aside { position: sticky; top: 70px; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 12px; padding: 14px; display: grid; gap: 8px; }
.panel label { display: grid; gap: 4px; color: var(--muted); font-size: 12px; }
.panel select, .panel textarea { width: 100%; color: var(--text); }
.panel textarea { font-size: 12px; line-height: 1.35; resize: vertical; }
.hint { margin: 0; color: var(--muted); font-size: 12px; }
.row { display: flex; gap: 6px; flex-wrap: wrap; }
.result { margin: 0; font-size: 11.5px; max-height: 220px; overflow: auto; white-space: pre-wrap; color: var(--muted); }
.result.ok { color: var(--ok); } .result.bad { color: var(--bad); }
.stats { color: var(--muted); font-size: 12px; }

.device { background: var(--panel); border: 1px solid var(--line); border-radius: 12px; padding: 14px; margin-bottom: 18px; transition: opacity .3s; }
body[data-conn-state=disconnected] .device, body[data-conn-state=auth_error] .device,
body[data-conn-state=need_token] .device { opacity: .5; filter: saturate(.3); }
.dev-head { display: flex; align-items: center; gap: 12px; flex-wrap: wrap; margin-bottom: 12px; }
.dev-head h2 { margin: 0; font-size: 17px; }
.dev-head h2 small { color: var(--muted); font-weight: 400; font-size: 12px; }
.status { display: flex; gap: 6px; flex-wrap: wrap; }
.chip { font-size: 12px; padding: 2px 9px; border-radius: 999px; border: 1px solid var(--line); color: var(--muted); white-space: nowrap; }
.chip.lan { color: var(--ok); border-color: rgba(63,185,80,.5); }
.chip.relay { color: var(--warn); border-color: rgba(210,153,34,.5); }
.chip.none { color: var(--bad); border-color: rgba(248,81,73,.4); }
.dev-body { display: flex; gap: 18px; flex-wrap: wrap; align-items: flex-start; }

/* the phone: a Lock Screen */
.phone { width: 409px; min-height: 560px; border-radius: 52px; padding: 12px 12px 28px; flex: none; position: relative;
  background: radial-gradient(130% 70% at 15% 0%, #4a5fa8 0%, #262d57 40%, #0c0e1c 100%);
  border: 8px solid #05060a; box-shadow: 0 0 0 1px #3a3f4b, 0 12px 32px rgba(0,0,0,.55); }
.island-row { display: flex; justify-content: center; align-items: center; gap: 6px; min-height: 37px; }
.island-idle { width: 126px; height: 37px; border-radius: 20px; }
.lock-time { text-align: center; color: rgba(255,255,255,.93); margin: 12px 0 18px; text-shadow: 0 1px 10px rgba(0,0,0,.25); }
.lock-time [data-field=date] { font-size: 18px; font-weight: 600; }
.lock-time .big { font-size: 84px; font-weight: 700; line-height: 1; letter-spacing: -2px; }
.stack { display: flex; flex-direction: column; gap: 10px; }
.empty { text-align: center; color: rgba(255,255,255,.45); margin-top: 40px; font-size: 13px; }

/* a Lock Screen Live Activity */
.la { position: relative; transition: opacity .3s, filter .3s; }
.la-card { border-radius: 24px; padding: 14px 16px 15px; overflow: hidden; box-shadow: 0 1px 0 rgba(255,255,255,.06) inset; }
.la-row { display: flex; align-items: center; gap: 12px; }
.la-main { flex: 1; min-width: 0; }
.la-title { font-weight: 600; font-size: 16px; line-height: 1.25; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.la-line { font-size: 15px; margin-top: 2px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.la-line [data-field=message] { opacity: .78; }
.la-line .timer { font-size: 22px; font-weight: 600; }
.timer { font-variant-numeric: tabular-nums; }
.la-trail { font-weight: 600; font-size: 16px; font-variant-numeric: tabular-nums; align-self: flex-start; white-space: nowrap; }
.bar { height: 6px; border-radius: 3px; background: rgba(128,128,128,.32); margin-top: 12px; overflow: hidden; display: flex; }
.bar .fill { height: 100%; border-radius: 3px; transition: width .25s; }
.bar[data-direction=reverse] { justify-content: flex-end; }
.la[data-phase=ended] { filter: grayscale(1); opacity: .5; }
.la[data-phase=stale] .la-card { opacity: .78; outline: 2px dashed rgba(255,204,0,.75); outline-offset: -2px; }
.badge { position: absolute; top: -8px; right: 16px; font-size: 11px; padding: 1px 8px; border-radius: 999px; background: #30363d; color: #fff; z-index: 1; }
.badge.stale { background: #9e6a03; }
.la-alert { font-size: 12px; padding: 6px 12px; margin-bottom: 6px; border-radius: 14px; background: rgba(255,255,255,.9); color: #000; }

/* icons: an MDI glyph, or a fallback glyph with the slug's initials */
.ic { display: inline-flex; align-items: center; justify-content: center; width: 40px; height: 40px; flex: none; line-height: 1; }
.ic.mdi { font-family: "lanpush-mdi"; font-size: 34px; font-style: normal; font-weight: normal; }
.ic.fb > span { display: inline-flex; align-items: center; justify-content: center; width: 34px; height: 34px; border-radius: 50%;
  border: 2px solid currentColor; font-size: 12.5px; font-weight: 700; letter-spacing: .02em; }

/* Aivi templates */
.grow { flex: 1; min-width: 0; }
.tp-head, .tg-row { display: flex; align-items: center; gap: 10px; }
.tv { font-variant-numeric: tabular-nums; }
.tv.big { font-size: 21px; font-weight: 700; }
.tp-head .tv[data-field=header-right] { font-size: 15px; opacity: .85; white-space: nowrap; }
.tp-foot { display: flex; gap: 10px; margin-top: 8px; font-size: 13px; }
.tp-foot .tv { opacity: .85; }
.tp .bar { height: 8px; border-radius: 4px; }
.segbar { display: flex; height: 8px; margin-top: 12px; position: relative; }
.segbar.split { gap: 3px; }
.segbar.layered { border-radius: 4px; overflow: hidden; }
.seg { position: relative; height: 100%; border-radius: 4px; overflow: hidden; min-width: 2px; }
.seg-track { position: absolute; inset: 0; }
.seg-fill { position: absolute; left: 0; top: 0; bottom: 0; border-radius: 4px; transition: width .25s; }
.segbar.layered .zones { position: absolute; inset: 0; display: flex; }
.zone { position: relative; height: 100%; }
.zone + .zone { box-shadow: inset 2px 0 0 rgba(0,0,0,.6); }
.seg-labels { display: flex; font-size: 11px; opacity: .72; margin-top: 5px; }
.seg-labels.split { gap: 3px; }
.seg-label { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.tm { display: flex; align-items: center; gap: 12px; }
.tm-cols { flex: 1; display: grid; grid-template-columns: repeat(auto-fit, minmax(0, 1fr)); gap: 12px; }
.tm-h, .tm-f { font-size: 12px; opacity: .68; }
.tm-v { font-size: 17px; font-weight: 600; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.tm-col.primary .tm-v { font-size: 22px; font-weight: 700; }
.tg-state { font-size: 17px; font-weight: 600; }
.tg-rem { font-size: 13px; opacity: .75; }
.tg-pct { font-size: 17px; font-weight: 600; }

/* Dynamic Island: always the system's black */
.side { flex: 1; min-width: 330px; display: flex; flex-direction: column; gap: 8px; }
.pres-list { display: flex; flex-direction: column; gap: 10px; }
p.none { margin: 0; color: var(--muted); font-size: 12px; }
.pres { border: 1px solid var(--line); border-radius: 10px; padding: 10px; display: grid; gap: 8px; background: #0f141a; }
.pres[data-phase=ended] { opacity: .55; }
.pres figure { margin: 0; display: grid; gap: 3px; }
.pres figcaption { font-size: 11px; color: var(--muted); }
.pres-row { display: flex; gap: 18px; align-items: flex-end; flex-wrap: wrap; }
.meta { font-size: 12px; color: var(--muted); display: flex; flex-wrap: wrap; gap: 4px; align-items: center; }
.meta .pres-title { color: var(--text); font-weight: 600; }
.meta .acts { margin-left: auto; display: flex; gap: 4px; }
.meta button { font-size: 11px; padding: 1px 8px; }
.di { background: #000; color: #fff; }
.di-compact { height: 37px; border-radius: 20px; display: inline-flex; align-items: center; padding: 0 14px 0 6px; gap: 8px; min-width: 200px; }
.di-compact .di-cam { flex: 1; min-width: 70px; }
.di-compact .ic { width: 26px; height: 26px; }
.di-compact .ic.mdi { font-size: 22px; }
.di-compact .ic.fb > span, .di-minimal .ic.fb > span { width: 22px; height: 22px; font-size: 9px; border-width: 1.5px; }
.di-trail { font-weight: 600; font-size: 14px; font-variant-numeric: tabular-nums; white-space: nowrap; }
.di-minimal { width: 37px; height: 37px; border-radius: 50%; display: inline-flex; align-items: center; justify-content: center; position: relative; }
.di-minimal .ring { position: absolute; inset: 3px; border-radius: 50%; }
.di-minimal .ring-hole { position: relative; width: 27px; height: 27px; border-radius: 50%; background: #000; display: flex; align-items: center; justify-content: center; }
.di-minimal .ic { width: 24px; height: 24px; }
.di-minimal .ic.mdi { font-size: 19px; }
.di-expanded { border-radius: 40px; padding: 16px 20px 18px; max-width: 372px; }
.dx-top { display: flex; align-items: center; gap: 12px; }
.dx-title { font-weight: 600; font-size: 15px; }
.dx-line { font-size: 14px; }
.dx-line [data-field=message] { opacity: .8; }
.dx-line .timer { font-size: 20px; font-weight: 600; }
.dx-trail { font-weight: 600; font-size: 15px; align-self: flex-start; }

/* plain notifications on the Lock Screen */
.notes { display: flex; flex-direction: column; gap: 8px; margin-top: 10px; }
.note { background: rgba(245,245,245,.82); color: #000; border-radius: 20px; padding: 10px 14px; backdrop-filter: blur(20px); }
.note-app { font-size: 11px; opacity: .55; display: flex; justify-content: space-between; }
.note-title { font-weight: 600; font-size: 14px; }
.note-body { font-size: 14px; }

/* event log */
.log { font-size: 11.5px; max-height: 280px; overflow: auto; margin: 0; padding: 0; list-style: none; border: 1px solid var(--line); border-radius: 8px; background: #0b0f14; }
.log li { padding: 3px 8px; border-bottom: 1px solid #1b2029; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.log li.none { color: var(--muted); }
.log time { color: var(--muted); }
.log .tag { color: var(--accent); }
.log .seq { color: var(--muted); }
.log code { color: #c9d1d9; }
.log .t-start { color: var(--ok); } .log .t-end { color: var(--bad); } .log .t-update { color: #d2a8ff; }
.log .t-lifecycle { color: var(--warn); } .log .t-snapshot, .log .t-synced { color: var(--accent); }
"""#
}
