#!/usr/bin/env bash
# Fails when the modules of a crate of the workspace (every crates/*/src) import each other in a
# cycle. A module is a file (`sections/merge.rs` is `sections::merge`, `synthetic/mod.rs` is `synthetic`); module A imports B
# when A names a path under `crate::B` (or `super::`) outside its `#[cfg(test)]` tests. Data flows
# one way through the pipeline, so the import graph must have no cycle: a cycle means two stages
# reach into each other's internals. Prints each cycle found.
set -euo pipefail
cd "$(dirname "$0")/.."
check() {
python3 - "$1" <<'PY'
import os, re, sys

root = sys.argv[1]
modules = {}
for dirpath, _, files in os.walk(root):
    for f in files:
        if not f.endswith(".rs"):
            continue
        rel = os.path.relpath(os.path.join(dirpath, f), root)[:-3].split(os.sep)
        if rel[-1] == "mod":
            rel = rel[:-1]
        if rel in (["lib"], ["main"]):
            rel = []
        modules[tuple(rel)] = os.path.join(dirpath, f)

def strip(text):
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    # Character literals first (`'"'` would open a string), then strings, whose escapes may be a
    # backslash before a line break (a string continued on the next line).
    text = re.sub(r"'(\\.|[^'\\\n])'", "' '", text)
    text = re.sub(r'"(\\.|[^"\\])*"', '""', text, flags=re.S)
    # Unit tests may reach anywhere: each `#[cfg(test)]` item (a `mod tests { ... }` block, or a
    # single `use`/item up to its `;` or closing brace) is left out.
    out, i = [], 0
    while (at := text.find("#[cfg(test)]", i)) >= 0:
        out.append(text[i:at])
        j, depth = at + len("#[cfg(test)]"), 0
        while j < len(text):
            c = text[j]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    j += 1
                    break
            elif c == ";" and depth == 0:
                j += 1
                break
            j += 1
        i = j
    out.append(text[i:])
    return "".join(out)

def paths(text):
    """Every path starting at `crate::` or `super::`, with `{a, b::c}` groups expanded."""
    out = []
    for m in re.finditer(r"\b(crate|super)::", text):
        out.extend(m.group(1) + "::" + p for p in expand(text, m.end()))
    return out

def expand(text, i):
    ident = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*|\*)\s*")
    prefix = []
    while True:
        if text.startswith("{", i):
            depth, j, items, start = 0, i, [], i + 1
            while j < len(text):
                c = text[j]
                if c == "{":
                    depth += 1
                elif c == "}":
                    depth -= 1
                    if depth == 0:
                        items.append(text[start:j])
                        break
                elif c == "," and depth == 1:
                    items.append(text[start:j])
                    start = j + 1
                j += 1
            out = []
            for item in items:
                item = item.strip()
                if item:
                    out.extend("::".join(prefix + [p]) if p else "::".join(prefix) for p in expand(item, 0))
            return out or ["::".join(prefix)]
        m = ident.match(text, i)
        if not m:
            return ["::".join(prefix)]
        prefix.append(m.group(1))
        i = m.end()
        if text.startswith("::", i):
            i += 2
        else:
            return ["::".join(prefix)]

def target(mod, path):
    parts = [p for p in path.split("::") if p]
    if parts[0] == "crate":
        parts = parts[1:]
    else:
        base = list(mod)
        while parts and parts[0] == "super":
            base = base[:-1]
            parts = parts[1:]
        parts = base + parts
    for n in range(len(parts), -1, -1):
        if tuple(parts[:n]) in modules:
            return tuple(parts[:n])
    return ()

edges = {m: set() for m in modules}
for mod, path in modules.items():
    for p in paths(strip(open(path).read())):
        t = target(mod, p)
        # A parent naming its child module, or the crate root, is declaration, not a stage's reach.
        if t and t != mod and t[: len(mod)] != mod:
            edges[mod].add(t)

# Tarjan's strongly connected components.
index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]
def visit(v):
    index[v] = low[v] = counter[0]
    counter[0] += 1
    stack.append(v)
    on.add(v)
    for w in sorted(edges[v]):
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on.discard(w)
            comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            sccs.append(sorted(comp))
sys.setrecursionlimit(10000)
for v in sorted(modules):
    if v not in index:
        visit(v)
name = lambda m: "::".join(m) or "crate"
if sccs:
    for comp in sccs:
        members = set(comp)
        print("import cycle among: " + ", ".join(name(m) for m in comp))
        for m in comp:
            for t in sorted(edges[m] & members):
                print(f"    {name(m)} -> {name(t)}")
    sys.exit(1)
print(f"check-layout: {len(modules)} modules, {sum(len(e) for e in edges.values())} imports, no cycle")
PY
}
# The check first proves it can fail: a tree whose `a` and `b::c` import each other (one through a
# `use` group, one through `super::`) is a cycle; without the back edge it is not.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/b"
printf 'pub mod a;\npub mod b;\n' > "$tmp/src/lib.rs"
printf 'use crate::{ids::X, b::c::f};\n' > "$tmp/src/a.rs"
printf 'pub mod c;\n' > "$tmp/src/b/mod.rs"
# The back edge comes after a string continued on the next line and a quote character.
printf '#[cfg(test)]\nmod tests { use crate::a::h; }\nfn s() { ("x\\\n y", \x27"\x27); }\nuse super::super::a::g; // crate::b::nothing\n' > "$tmp/src/b/c.rs"
printf 'pub struct X;\n' > "$tmp/src/ids.rs"
if check "$tmp/src" >/dev/null; then
    echo "check-layout: the self-test's cycle was not found" >&2
    exit 1
fi
printf '#[cfg(test)]\nuse crate::a::h;\n' > "$tmp/src/b/c.rs"
check "$tmp/src" >/dev/null || { echo "check-layout: the self-test's acyclic tree was refused" >&2; exit 1; }
if [ $# -gt 0 ]; then
    check "$1"
else
    for src in crates/*/src; do
        printf '%s: ' "$src"
        check "$src"
    done
fi
