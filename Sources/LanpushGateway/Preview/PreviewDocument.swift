/// The live preview page: one self-contained HTML document (CSS and JS inline, no external resource but
/// lanpushd's own `/preview/mdi-font`), so it loads in one request and works with no internet.
///
/// Regions carry stable `data-region` / `data-field` / `data-*` attributes (tests and users' own tooling
/// read them); README "Live preview" describes what each shows.
enum PreviewDocument {
    static let html: String = head + "<style>\n" + PreviewStyle.source + "\n</style>\n</head>\n" + body
        + "<script>\n" + PreviewScript.source + "\n</script>\n</body>\n</html>\n"

    static let head = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>lanpush · live preview</title>
<link rel="icon" href="data:,">

"""#

    static let body = #"""
<body data-conn-state="idle">
<header class="top">
  <div class="brand">lanpush <span>live preview</span></div>
  <div class="conn" data-region="connection" data-conn-state="idle"><span class="dot"></span><span data-field="conn-text">Starting…</span></div>
  <form class="token" data-region="token-form" data-needed="false" autocomplete="off">
    <input type="password" data-field="token" placeholder="admin or viewer token" aria-label="token" autocomplete="off">
    <button type="submit" class="primary" data-action="connect">Connect</button>
    <button type="button" data-action="forget" title="forget the token kept in this browser">Forget</button>
  </form>
</header>
<div class="banner" data-region="error" data-error-kind="" hidden><span data-field="error-text"></span></div>
<main>
  <div data-region="devices">
    <p class="waiting" data-field="waiting">Waiting for the gateway's snapshot…</p>
  </div>
  <aside>
    <section class="panel" data-region="send-panel">
      <h3>Send test payload</h3>
      <p class="hint">Posts through the real ingest path (<code>POST /v1/push</code>, admin token) — no phone, no HA, no push budget.</p>
      <label>Example <select data-field="sample"></select></label>
      <label>Target <select data-field="target"><option value="all">all devices</option></select></label>
      <textarea data-field="payload" rows="16" spellcheck="false" aria-label="payload"></textarea>
      <div class="row">
        <button type="button" class="primary" data-action="send">Send</button>
        <button type="button" data-action="reset-sample">Reset example</button>
        <button type="button" data-action="end-all" title="DELETE /v1/activities on the target">End all</button>
      </div>
      <pre class="result" data-field="send-result" data-status=""></pre>
    </section>
    <p class="stats" data-field="stats" data-frames="0"></p>
  </aside>
</main>

"""#
}
