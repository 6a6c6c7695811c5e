#!/usr/bin/env python3
"""man.py: writes idgen's man pages from the sources that also make --help and the headers,
so a page cannot disagree with them.

  idgen.1, idgen-<command>.1  help2man over `idgen --help` and `idgen <command> --help`
                              (the commands are the ones `idgen --help` lists)
  idgen.3                     docs/man/idgen.3.in, with every public function of the
                              headers (its prototype and the comment above it) and the
                              error table of idgen/error.h filled in

Usage: man.py --idgen BUILD/idgen --src SOURCE_DIR --out DIR --version V [--docdir D]
"""
import argparse
import os
import re
import stat
import subprocess
import sys
import tempfile

SECTION1_INCLUDE = """\
[EXIT STATUS]
.TP
.B 0
success
.TP
.B 1
a runtime failure: the operation could not be done (a lease lost, a coordination
service unreachable at start, a file that cannot be written), or a check found a problem
.TP
.B 2
bad usage or a bad configuration: one line on standard error says what, and nothing is
written to standard output

[SEE ALSO]
{see_also}
.PP
The documentation in
.IR {docdir}/docs :
{docs}.
"""


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw).stdout


def commands(idgen):
    """(name, summary) for each command `idgen --help` lists."""
    out, listing = [], False
    for line in run([idgen, "--help"]).splitlines():
        if line.strip() == "commands:":
            listing = True
        elif listing and line.startswith("  ") and line.strip():
            name, summary = line.split(None, 1)
            out.append((name, summary.strip()))
        elif listing and not line.strip() and out:
            break
    if not out:
        sys.exit("man.py: `idgen --help` lists no commands")
    return out


def roff_text(text):
    """Plain text as roff: backslashes escaped, no line starting with a control character."""
    text = text.replace("\\", "\\e")
    return "\n".join(("\\&" + l if l[:1] in (".", "'") else l) for l in text.splitlines())


def section1(idgen, src, out, version, docdir):
    cmds = commands(idgen)
    docs = sorted(f for f in os.listdir(os.path.join(src, "docs")) if f.endswith(".md"))
    pages = [("idgen", None, "unique, time-ordered 64-bit IDs, UUIDs and ULIDs: "
              "the command and the network service")]
    pages += [(f"idgen-{n}", n, s) for n, s in cmds]
    with tempfile.TemporaryDirectory() as tmp:
        for page, cmd, summary in pages:
            others = [f".BR {p} (1)" for p, _, _ in pages if p != page] + [".BR idgen (3)"]
            include = os.path.join(tmp, page + ".h2m")
            with open(include, "w") as f:
                f.write(SECTION1_INCLUDE.format(
                    see_also=",\n".join(others), docdir=docdir,
                    docs=", ".join(docs)))
            # help2man runs a program named as the page, whose --help is the command's
            # own, its usage lines in the GNU form help2man reads.
            help_text = os.path.join(tmp, page + ".help")
            with open(help_text, "w") as f:
                f.write(gnu_usage(run([idgen] + ([cmd] if cmd else []) + ["--help"])))
            program = os.path.join(tmp, page)
            with open(program, "w") as f:
                f.write(f'#!/bin/sh\ncat "{help_text}"\n')
            os.chmod(program, stat.S_IRWXU)
            target = os.path.join(out, page + ".1")
            run(["help2man", "--no-info", "--section=1", f"--name={summary}",
                 f"--version-string={version}", "--source=idgen " + version,
                 "--manual=idgen manual", f"--include={include}", f"--output={target}",
                 program])
            no_hyphenation(target)


def gnu_usage(text):
    """'usage: idgen x ...' as 'Usage: idgen x ...', a second form as '  or: idgen ...',
    a wrapped line joined to the one it continues."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("usage: "):
        sys.exit("man.py: --help does not start with 'usage: '")
    head = ["Usage: " + lines[0][len("usage: "):]]
    i = 1
    while i < len(lines) and lines[i].strip():
        line = lines[i].strip()
        if line.startswith("idgen "):
            head.append("  or: " + line)
        else:
            head[-1] += " " + line
        i += 1
    return "\n".join(head + lines[i:]) + "\n"


def no_hyphenation(path):
    """Names of options and variables must not break at a hyphen: .nh after .TH."""
    with open(path) as f:
        page = f.read()
    page = re.sub(r"(?m)^(\.TH .*)$", r"\1\n.nh", page, count=1)
    with open(path, "w") as f:
        f.write(page)


HEADER_DOC = re.compile(r"^/\* (idgen/\S+\.h): (.*?)\*/", re.S)


def header_entries(path):
    """(summary, [(prototypes, comment)]) for a header: each IDGEN_API or static inline
    function with the comment just above it; declarations that follow one another share
    the comment above the first."""
    text = open(path).read()
    m = HEADER_DOC.match(text)
    summary = " ".join(m.group(2).split()) if m else ""
    lines = text.splitlines()
    entries, comment, previous, i = [], "", None, 0
    while i < len(lines):
        stripped = lines[i].strip()
        if stripped.startswith("/*"):
            block = [stripped]
            while "*/" not in block[-1]:
                i += 1
                block.append(lines[i].strip())
            comment, previous = clean_comment(block), "comment"
        elif stripped.startswith(("IDGEN_API", "static inline")):
            decl = [stripped]
            inline = stripped.startswith("static inline")
            while (";" if not inline else "{") not in decl[-1]:
                i += 1
                decl.append(lines[i].strip())
            while inline and lines[i] != "}" and not decl[-1].endswith("}"):
                i += 1  # the body of an inline function
            proto = " ".join(decl).replace("IDGEN_API ", "").split("{")[0]
            proto = re.sub(r"\s+", " ", proto).strip().rstrip(";") + ";"
            if previous == "decl":
                entries[-1][0].append(proto)
            else:
                entries.append(([proto], comment if previous == "comment" else ""))
            previous = "decl"
        else:
            previous = None
        i += 1
    return summary, entries


def clean_comment(block):
    """The words of a /* ... */ block, without its frame."""
    text = "\n".join(block)
    text = re.sub(r"^/\*+|\*+/$", "", text)
    text = re.sub(r"(?m)^\*(?!/)", "", text)
    return " ".join(text.split())


def section3(src, out, version, docdir):
    inc = os.path.join(src, "include")
    headers = sorted(os.listdir(os.path.join(inc, "idgen")))
    funcs = []
    for h in headers:
        summary, entries = header_entries(os.path.join(inc, "idgen", h))
        if not entries:
            continue
        funcs.append(f'.SS "idgen/{h}"')
        funcs.append(roff_text(summary))
        for protos, comment in entries:
            funcs.append(".PP\n.nf")
            funcs.extend("\\fB" + roff_text(p) + "\\fP" for p in protos)
            funcs.append(".fi")
            if comment:
                funcs.append(".RS\n" + roff_text(comment) + "\n.RE")
    errors = []
    for name, value, text in re.findall(r'X\((\w+), (-\d+), "([^"]*)"\)',
                                        open(os.path.join(inc, "idgen", "error.h")).read()):
        errors.append(f".TP\n.BR IDGEN_{name} \" ({value})\"\n{roff_text(text)}")
    page = open(os.path.join(src, "docs", "man", "idgen.3.in")).read()
    page = page.replace("@VERSION@", version).replace("@DOCDIR@", docdir)
    page = page.replace("@FUNCTIONS@", "\n".join(funcs))
    page = page.replace("@ERRORS@", "\n".join(errors))
    with open(os.path.join(out, "idgen.3"), "w") as f:
        f.write(page)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--idgen", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--version", required=True)
    # install_paths.cmake puts the docs' folder in at install time
    ap.add_argument("--docdir", default="@IDGEN_DOCDIR@")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    section1(a.idgen, a.src, a.out, a.version, a.docdir)
    section3(a.src, a.out, a.version, a.docdir)


if __name__ == "__main__":
    main()
