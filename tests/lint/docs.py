#!/usr/bin/env python3
"""tests/lint/docs.py -- the docs name only make targets, options and files that exist.

    python3 tests/lint/docs.py [--files A.md B.md ...]

Reads README.md, docs/*.md, tests/README.md and bench/README.md (or the
files given) and reports, as FILE:LINE: message, every
  - `make X Y` (in backticks or a code block, at a command's start) whose X or
    Y is not a target of Makefile or mk/*.mk: a `name:` line, .PHONY, or a
    pattern (run-% matches run-pencil, $(BUILD)/% matches build/mpich/heat2d);
    VAR=value and -j2 are skipped, `make -C dir` is someone else's Makefile;
  - option name (DTENSOR_*, DT_MAX_*, DT_MALLOC, DT_FREE, DT_ASSERT, DT_API,
    DT_OP_CACHE) that dtensor.h, dtensor_cuda.h and dtensor_layers.h never mention;
  - repository path in backticks (a word with a / under an existing top-level
    entry, or ending in .c .h .cu .sh .py .md .mk .txt) that does not exist,
    from the repository root or the doc's folder (a bare file name: anywhere);
    build/ (generated), /abs, and words with < * $ NAME or a placeholder
    component in capitals (bench/results/FILE) are not paths;
  - markdown link to a missing file, or to a #heading the target lacks;
  - README.md (the front door) longer than README_MAX_LINES (300) lines:
    detail belongs in docs/, linked from it.
Last line: "docs: N references checked, N bad"; exit 1 if any is bad.
Run by tests/lint/run.sh (make lint) and make check.
"""
import argparse, glob, os, re, shlex, sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OPTION = re.compile(r"(?:(?<=-D)|(?<!\w))(DTENSOR_[A-Z0-9_]+|DT_MAX_[A-Z_]+|DT_MALLOC|DT_FREE|DT_ASSERT|DT_API|DT_OP_CACHE)\b")
README_MAX_LINES = 300
FILE = re.compile(r"(^|/)[\w+-][\w.+-]*\.(c|h|cu|sh|py|md|mk|txt)$")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def make_targets():
    """Regexes of every target in Makefile and mk/*.mk."""
    pats = []
    for mf in ["Makefile", *sorted(glob.glob("mk/*.mk"))]:
        for line in read(mf).replace("\\\n", " ").splitlines():
            m = re.match(r"\.PHONY\s*:(.*)", line) or re.match(r"([^\s#=:][^=:]*?)\s*::?(?!=)", line)
            for name in m.group(1).split() if m else []:
                if re.fullmatch(r"\$\(\w+\)", name):  # $(LINKED_BINS): a list of files
                    continue
                parts = re.split(r"(%|\$\(\w+\))", name)
                pats.append(re.compile("".join(
                    ".+" if p == "%" else "[^/]+" if p.startswith("$(") else re.escape(p) for p in parts)))
    return pats


def slug(heading):
    """GitHub's anchor for a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    for h in re.findall(r"^#+\s+(.*?)\s*#*$", strip_fences(read(path)), re.M):
        s = slug(re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", h))
        out.add(s if s not in seen else f"{s}-{seen[s]}")
        seen[s] = seen.get(s, 0) + 1
    return out


def strip_fences(text):
    """The text with every fenced block's lines blanked (line numbers kept)."""
    out, fence = [], False
    for line in text.split("\n"):
        if re.match(r"\s*(```|~~~)", line):
            fence = not fence
            out.append("")
        else:
            out.append("" if fence else line)
    return "\n".join(out)


def make_mentions(text):
    """(offset, target) for each `make ...` at the start of a command."""
    for m in re.finditer(r"[^\n`]+", text):
        # pieces of a command line: a # comment may hold a command of its own ("# = make x")
        for piece in re.finditer(r"[^;&|#]+", m.group(0)):
            c = re.match(r"\s*[$=]?\s*(?:\w+=\S*\s+)*make(\s.*|$)", piece.group(0))
            if not c:
                continue
            try:
                words = shlex.split(c.group(1))
            except ValueError:
                words = c.group(1).split()
            if any(w.startswith("-C") for w in words):
                continue
            for w in words:
                if not (w.startswith("-") or "=" in w or w.isdigit()):
                    yield m.start() + piece.start(), w


def path_like(word, docdir):
    if (re.search(r"[<>*$]|NAME|://|(^|/)[A-Z]+(/|$)", word) or word.startswith(("/", "build/", "-"))
            or not re.fullmatch(r"[\w.+/-]+", word)):
        return False
    first = word.split("/")[0]
    return bool(FILE.search(word)) or ("/" in word and any(
        os.path.isdir(os.path.join(d, first)) for d in (".", docdir) if first not in ("", ".")))


def exists(word, docdir, names):
    """A path from the root or the doc's folder; a bare file name anywhere in the tree."""
    return os.path.exists(word) or os.path.exists(os.path.join(docdir, word)) or ("/" not in word and word in names)


def check(doc, targets, options, names):
    """(line, message) of each bad reference in doc; the number checked."""
    text, docdir, bad, n = read(doc), os.path.dirname(doc) or ".", [], 0
    prose = strip_fences(text)  # prose and code keep text's line numbers
    code = "\n".join(l if p == "" and l != "" else "" for l, p in zip(text.split("\n"), prose.split("\n")))
    at = lambda src, off: src.count("\n", 0, off) + 1
    spans = [(m.start(1), m.group(1)) for m in re.finditer(r"`((?:[^`\n]|\n(?!\n))+)`", prose)]
    mentions = [(at(prose, o + t), w) for o, s in spans for t, w in make_mentions(s)]
    for ln, target in mentions + [(at(code, t), w) for t, w in make_mentions(code)]:
        n += 1
        if not any(p.fullmatch(target) for p in targets):
            bad.append((ln, f"make {target}: no such target in Makefile or mk/*.mk"))
    for m in OPTION.finditer(text):
        n += 1
        if m.group(1) not in options:
            bad.append((at(text, m.start()), f"{m.group(1)}: not an option of dtensor.h, dtensor_cuda.h or dtensor_layers.h"))
    for off, span in spans:
        for m in re.finditer(r"\S+", span):
            w = m.group(0).strip("\"'()").rstrip(",;:.")
            if path_like(w, docdir):
                n += 1
                if not exists(w, docdir, names):
                    bad.append((at(prose, off + m.start()), f"{w}: no such file"))
    for m in re.finditer(r"\[[^\]]*\]\(([^)\s]+)\)", prose):
        target, _, anchor = m.group(1).partition("#")
        if ":" in target:
            continue
        n += 1
        path = os.path.normpath(os.path.join(docdir, target)) if target else doc
        if not os.path.exists(path):
            bad.append((at(prose, m.start()), f"link to {m.group(1)}: no such file"))
        elif anchor and path.endswith(".md") and anchor not in anchors(path):
            bad.append((at(prose, m.start()), f"link to {m.group(1)}: no such heading in {path}"))
    return bad, n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", nargs="+", help="markdown files to check instead of the docs")
    args = ap.parse_args()
    shown = {os.path.relpath(os.path.abspath(f), ROOT): f for f in args.files or []}
    os.chdir(ROOT)
    docs = list(shown) or ["README.md", *sorted(glob.glob("docs/*.md")), "tests/README.md", "bench/README.md"]
    names = set()
    for d, subs, fs in os.walk("."):
        subs[:] = [s for s in subs if (d, s) not in ((".", "build"), (".", ".git"))]
        names.update(fs)
    targets = make_targets()
    options = set(OPTION.findall(read("dtensor.h") + read("dtensor_cuda.h") + read("dtensor_layers.h")))
    total = nbad = 0
    for doc in docs:
        name = shown.get(doc, doc)
        if not os.path.exists(doc):
            print(f"{name}:1: no such file")
            nbad += 1
            continue
        bad, n = check(doc, targets, options, names)
        if doc == "README.md":
            n += 1
            lines = read(doc).count("\n")
            if lines > README_MAX_LINES:
                bad.append((lines, f"{lines} lines: the README promises at most {README_MAX_LINES}; move detail to docs/"))
        total += n
        nbad += len(bad)
        for ln, msg in sorted(bad):
            print(f"{name}:{ln}: {msg}")
    print(f"docs: {total} references checked, {nbad} bad")
    return 1 if nbad else 0


if __name__ == "__main__":
    sys.exit(main())
