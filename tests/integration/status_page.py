"""status_page.py: drives idgen serve's status page (GET /) in headless Chromium through
its DevTools protocol over a pipe (--remote-debugging-pipe: no port, no library).

Usage: python3 status_page.py CHROMIUM http://ADDR:PORT TOKEN SCREENSHOT.png
With a token set on the server, the page must load without it, ask for it once, keep it
in sessionStorage, show the worker ID and lease state that /v1/info gives, chart the IDs
issued, list the top callers as /v1/callers gives them (the load's User-Agent among them),
fetch nothing from another origin, and ask again for a refused token. Prints one
line per check; exits 1 if any fails.
"""
import base64
import fcntl
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

chromium, base, token, screenshot = sys.argv[1:5]
failures = 0


def check(name, ok, detail=""):
    global failures
    print(("ok   " if ok else "FAIL: ") + name + ("" if ok else ": " + str(detail)))
    failures += not ok


class Browser:
    """Chromium with the DevTools protocol on fds 3 (its input) and 4 (its output):
    JSON messages, each ended by a NUL byte."""

    def __init__(self, profile):
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()
        # duplicates above 9, so that putting them at 3 and 4 cannot overwrite each other
        high_r = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD_CLOEXEC, 10)
        high_w = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD_CLOEXEC, 10)

        def at_3_and_4():
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        self.proc = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu",
             "--remote-debugging-pipe", "--user-data-dir=" + profile, "--no-first-run",
             "--no-default-browser-check", "--window-size=1000,720", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            close_fds=False, preexec_fn=at_3_and_4)
        for fd in (to_chrome_r, from_chrome_w, high_r, high_w):
            os.close(fd)
        self.next_id = 0
        self.pending = b""
        self.events = []
        self.session = None

    def _read_message(self, deadline):
        while b"\0" not in self.pending:
            if time.time() > deadline:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self.from_chrome, 65536)
            if not chunk:
                raise EOFError("Chromium closed its pipe")
            self.pending += chunk
        msg, self.pending = self.pending.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, session=True, timeout=30, **params):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.to_chrome, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def eval(self, expression):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                      awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def wait_for(self, expression, timeout=20):
        """The expression's value once truthy; None after timeout seconds. An exception
        (the page still loading) counts as not yet."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                value = self.eval(expression)
            except RuntimeError:
                value = None
            if value:
                return value
            time.sleep(0.2)
        return None

    def close(self):
        try:
            self.call("Browser.close", session=False, timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def info():
    req = urllib.request.Request(base + "/v1/info",
                                 headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.load(r)


CALLER = "status-page-caller"


def callers():
    req = urllib.request.Request(base + "/v1/callers",
                                 headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.load(r)


def traffic(stop):
    """IDs for the chart: a batch every 50 ms while the page watches, under the caller's
    name CALLER (its User-Agent)."""
    req = urllib.request.Request(base + "/v1/ids?count=100",
                                 headers={"Authorization": "Bearer " + token,
                                          "User-Agent": CALLER})
    while not stop.is_set():
        with urllib.request.urlopen(req, timeout=5) as r:
            r.read()
        time.sleep(0.05)


text = lambda id_: f"document.getElementById('{id_}').textContent"
asked = "!document.getElementById('token-form').hidden"

with tempfile.TemporaryDirectory() as profile:
    b = Browser(profile)
    try:
        target = b.call("Target.createTarget", session=False, url="about:blank")["targetId"]
        b.session = b.call("Target.attachToTarget", session=False, targetId=target,
                           flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Network"):
            b.call(domain + ".enable")

        # 1. The page is public; its data is not: it asks for the token.
        b.call("Page.navigate", url=base + "/")
        check("the page asks for the token", b.wait_for(asked))
        check("nothing in sessionStorage yet",
              b.eval("sessionStorage.getItem('idgen-token')") is None)

        # 2. Given once, the token is kept and the data shows, as /v1/info says it.
        b.eval(f"document.getElementById('token-input').value = {json.dumps(token)};"
               "document.getElementById('token-form').requestSubmit(); true")
        shown = b.wait_for(f"{text('lease-state')} === 'held' && "
                           f"/^[0-9]+$/.test({text('worker-id')})")
        check("the lease state and worker ID show", shown)
        served = info()
        check("worker ID as /v1/info", b.eval(text("worker-id")) == str(served["worker_id"]),
              f"{b.eval(text('worker-id'))} vs {served['worker_id']}")
        check("lease state as /v1/info", b.eval(text("lease-state")) == served["lease"]["state"],
              f"{b.eval(text('lease-state'))} vs {served['lease']['state']}")
        check("the token is in sessionStorage",
              b.eval("sessionStorage.getItem('idgen-token')") == token)
        for id_ in ("hwm-ahead", "hwm-written", "clock-policy", "clock-source",
                    "lease-error", "layout-name"):
            check(f"#{id_} is filled", b.eval(text(id_)) not in ("", "-"), b.eval(text(id_)))
        check("the clock policy as /v1/info",
              b.eval(text("clock-policy")) == "policy " + served["clock"]["policy"])
        fields = b.eval("[...document.getElementById('layout-bar').children]"
                        ".map(d => [d.textContent, d.getBoundingClientRect().width])")
        total = sum(w for _, w in fields) or 1
        check("the layout bar: sign, time, worker, seq",
              [t for t, _ in fields] == ["sign 1", "time 41", "worker 10", "seq 12"], fields)
        check("the layout bar is drawn to scale",
              all(abs(w / total - int(t.split()[1]) / 64) < 0.01 for t, w in fields), fields)
        rows = "[...document.getElementById('generators').children].map(r => r.cells[0].textContent)"
        b.wait_for(f"{rows}.length === {len(served['generators'])}")
        check("a row per generator, as /v1/info lists them",
              b.eval(rows) == list(served["generators"]), b.eval(rows))
        kinds = b.eval("[...document.getElementById('generators').children]"
                       ".map(r => r.cells[1].textContent)")
        check("each generator's kind", kinds == [g["kind"] for g in served["generators"].values()],
              kinds)

        # 3. The chart follows the IDs issued.
        stop = threading.Event()
        load = threading.Thread(target=traffic, args=(stop,))
        load.start()
        try:
            charted = b.wait_for("document.getElementById('rate-line')"
                                 ".getAttribute('points').split(' ').length >= 4 && "
                                 f"parseInt({text('rate-now')}.replace(/,/g, '')) > 0")
            rows = ("[...document.getElementById('callers').children]"
                    ".map(r => [...r.cells].map(c => c.textContent))")
            listed = b.wait_for(f"{rows}.some(r => r[0] === '{CALLER}' && "
                                "parseInt(r[1].replace(/,/g, '')) >= 5) && " + rows)
        finally:
            stop.set()
            load.join()
        check("IDs per second are charted", charted, b.eval(text("rate-now")))

        # 4. The top callers, as /v1/callers lists them: the load's name among them.
        check(f"the top callers table lists {CALLER}", listed, b.eval(rows))
        served = callers()
        names = [c["name"] for c in served["callers"]]
        check("each caller row is one /v1/callers lists (or other)",
              listed and all(r[0] in names or r[0] == "other" for r in listed), listed)
        check("at most 20 callers and other", listed and len(listed) <= 21, listed)
        check("the table says its counts are approximate, with the bound",
              "approximate" in (b.eval(text("callers-note")) or ""), b.eval(text("callers-note")))

        shot = b.call("Page.captureScreenshot", format="png")
        os.makedirs(os.path.dirname(screenshot), exist_ok=True)
        with open(screenshot, "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        check("screenshot saved", os.path.getsize(screenshot) > 10000, screenshot)

        # 5. Asked once: a reload keeps the token.
        b.call("Page.reload")
        b.wait_for("document.readyState === 'complete'")
        again = b.wait_for(f"{text('lease-state')} === 'held'")
        check("after a reload the data shows without asking", again and not b.eval(asked))

        # 6. A refused token is dropped and asked for again.
        b.eval("sessionStorage.setItem('idgen-token', 'wrong-token-0000000000'); true")
        b.call("Page.reload")
        check("a refused token is asked for again",
              b.wait_for(f"{asked} && document.getElementById('token-note').textContent"
                         ".includes('refused')"))
        check("and dropped from sessionStorage",
              b.eval("sessionStorage.getItem('idgen-token')") is None)

        # 7. Self-contained: every request went to the server itself.
        urls = [e["params"]["request"]["url"] for e in b.events
                if e.get("method") == "Network.requestWillBeSent"]
        foreign = [u for u in urls if not u.startswith(base + "/")
                   and not u.startswith(("about:", "data:"))]
        check(f"no request leaves the server ({len(urls)} requests)", urls and not foreign,
              foreign)
    finally:
        b.close()

sys.exit(1 if failures else 0)
