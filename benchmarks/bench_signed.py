"""Signed authority at size: a push of 1,000 SSH-signed commits, 100 of them an
owner's oracle commits (seed appends), to a bare repository with the
pre-receive hook installed. What verifying every signature in-process adds
to the hook, beside `git log --format=%G?` verifying the same range (git
spawns ssh-keygen for each commit). One run, several repetitions, medians.

    python benchmarks/bench_signed.py [--runs N] [--no-profile]

The commits are real signed commits: each is signed in this process with an
ed25519 key made by ssh-keygen (SSHSIG, namespace git, as `git commit -S` with
gpg.format=ssh writes it) and written with `git hash-object -t commit -w`;
the reference run, through ssh-keygen, must report every one of them "G".

The baseline is the same hook on the same history without the contract's
`authority` section: the same generator, key and commits, in a repository of
its own (the contract is in every commit's tree, so its commit ids differ).
There the push is rejected (the seed appends are write-denied), after the
same work less the signatures. The hook runs directly in each bare
repository, as git runs it, on the `<old> <new> refs/heads/main` line of the
push; after one untimed warm-up its cache is warm in both.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable, List, Sequence, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_scale  # measure, interleaved, header, the environment
from bench_scale import ENV, PUSH_ENV, Sample, blob, git

COMMITS = 1_000
ORACLE_EVERY = 10  # every 10th commit appends a seed: 100 oracle commits
SOURCE_FILES = 100
GOAL = 0.05
SIGNERS = ".oracle-guard/allowed_signers"
SEEDS = "seeds/corpus.jsonl"
CONTRACT = f"""\
version: 1
seeds:
  - {{paths: ["{SEEDS}"], format: jsonl}}
write_set:
  allow: ["src/**"]
timeout_s: 600
"""
# timeout_s: the server's budget (4 s by default) would cut a measurement short
# on a loaded machine; the benchmark times the hook, it does not bound it
AUTHORITY = f"""\
authority:
  signers: {SIGNERS}
"""
IDENTITY = b"owner <owner@example.invalid>"
WHEN = 1758800000


# -- signing, in-process (OpenSSH PROTOCOL.sshsig) -----------------------------
def _string(value: bytes) -> bytes:
    return len(value).to_bytes(4, "big") + value


class Signer:
    """An ed25519 key made by ssh-keygen; signs as `ssh-keygen -Y sign -n git`."""

    def __init__(self, folder: str) -> None:
        from cryptography.hazmat.primitives.serialization import load_ssh_private_key

        self.path = os.path.join(folder, "owner")
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "owner", "-f", self.path],
            check=True,
            env=ENV,
        )
        with open(self.path, "rb") as f:
            self._key = load_ssh_private_key(f.read(), password=None)
        with open(self.path + ".pub") as f:
            self.public_line = " ".join(f.read().split()[:2])
        self.public_blob = base64.b64decode(self.public_line.split()[1])

    def armored(self, message: bytes) -> bytes:
        digest = hashlib.sha512(message).digest()
        signed = b"SSHSIG" + _string(b"git") + _string(b"") + _string(b"sha512") + _string(digest)
        inner = _string(b"ssh-ed25519") + _string(self._key.sign(signed))
        sshsig = (
            b"SSHSIG"
            + (1).to_bytes(4, "big")
            + _string(self.public_blob)
            + _string(b"git")
            + _string(b"")
            + _string(b"sha512")
            + _string(inner)
        )
        encoded = base64.b64encode(sshsig)
        lines = [encoded[i : i + 70] for i in range(0, len(encoded), 70)]  # as ssh-keygen
        return (
            b"-----BEGIN SSH SIGNATURE-----\n"
            + b"\n".join(lines)
            + b"\n-----END SSH SIGNATURE-----\n"
        )


def signed_commit(signer: Signer, tree: str, parent: str, when: int, message: bytes) -> bytes:
    """A commit object as `git commit -S` writes it: the signature of the
    unsigned object in a gpgsig header at the end of the header block."""
    header = b"tree %s\nparent %s\nauthor %s %d +0000\ncommitter %s %d +0000\n" % (
        tree.encode(),
        parent.encode(),
        IDENTITY,
        when,
        IDENTITY,
        when,
    )
    body = b"\n" + message
    lines = signer.armored(header + body).splitlines()
    signature = b"gpgsig " + b"\n ".join(lines) + b"\n"
    return header + signature + body


def object_id(kind: bytes, raw: bytes) -> str:
    return hashlib.sha1(b"%s %d\0" % (kind, len(raw)) + raw).hexdigest()


# -- building ------------------------------------------------------------------
def history_stream(contract: str, signers_line: str) -> bytes:
    """The base commit on main; then COMMITS unsigned commits on refs/heads/draft,
    whose trees the signed commits take: every ORACLE_EVERY-th appends a line
    to the seed corpus, the others each change one source file."""
    out = [
        b"commit refs/heads/main\nmark :1\n",
        b"committer %s %d +0000\n" % (IDENTITY, WHEN),
        blob(b"the oracle\n"),
        b"M 100644 inline .oracle-guard.yaml\n",
        blob(contract.encode()),
        b"M 100644 inline %s\n" % SIGNERS.encode(),
        blob(signers_line.encode() + b"\n"),
        b"M 100644 inline %s\n" % SEEDS.encode(),
        blob(b'{"seed": 0}\n'),
    ]
    for i in range(SOURCE_FILES):
        out += [b"M 100644 inline src/m%02d/f%03d.py\n" % (i % 10, i), blob(b"x = %d\n" % i)]
    corpus = b'{"seed": 0}\n'
    for c in range(COMMITS):
        out += [
            b"commit refs/heads/draft\nmark :%d\n" % (c + 2),
            b"committer %s %d +0000\n" % (IDENTITY, WHEN + 1 + c),
            blob(b"change %d\n" % c),
            b"from :%d\n" % (c + 1),
        ]
        if c % ORACLE_EVERY == ORACLE_EVERY - 1:
            corpus += b'{"seed": %d}\n' % (c + 1)
            out += [b"M 100644 inline %s\n" % SEEDS.encode(), blob(corpus)]
        else:
            n = c % SOURCE_FILES
            out += [
                b"M 100644 inline src/m%02d/f%03d.py\n" % (n % 10, n),
                blob(b"x = %d  # change %d\n" % (n, c)),
            ]
    return b"".join(out)


def build_client(path: str, contract: str, signer: Signer) -> Tuple[str, str]:
    """A client whose main is the base commit and whose refs/heads/signed is
    COMMITS owner-signed commits on it; returns (base, signed tip)."""
    git("init", "-q", "-b", "main", path)
    git(
        "fast-import",
        "--quiet",
        cwd=path,
        stdin=history_stream(contract, f"alice {signer.public_line}"),
    )
    base = git("rev-parse", "main", cwd=path).decode().strip()
    trees = git("log", "--reverse", "--format=%T", "main..draft", cwd=path).decode().split()
    assert len(trees) == COMMITS
    folder = tempfile.mkdtemp(dir=os.path.dirname(path), prefix="commits-")
    names, ids, parent = [], [], base
    for c, tree in enumerate(trees):
        kind = b"seed append" if c % ORACLE_EVERY == ORACLE_EVERY - 1 else b"source change"
        raw = signed_commit(signer, tree, parent, WHEN + 1 + c, b"%s %d\n" % (kind, c))
        parent = object_id(b"commit", raw)
        names.append(os.path.join(folder, f"{c:04d}"))
        ids.append(parent)
        with open(names[-1], "wb") as f:
            f.write(raw)
    # one process writes them all; git checks each is a well-formed commit
    written = (
        git(
            "hash-object",
            "-t",
            "commit",
            "-w",
            "--stdin-paths",
            cwd=path,
            stdin="".join(n + "\n" for n in names).encode(),
        )
        .decode()
        .split()
    )
    if written != ids:
        raise SystemExit("git hash-object gave other ids than the commits' own")
    shutil.rmtree(folder)
    git("update-ref", "refs/heads/signed", parent, cwd=path)
    git("update-ref", "-d", "refs/heads/draft", cwd=path)
    return base, parent


def build_server(
    tmp: str, name: str, authority: bool, signer: Signer
) -> Tuple[Tuple[str, str, str], float]:
    """((bare repository, base, signed tip), seconds the push of the signed
    commits took): a client's base pushed to the bare
    repository, the hook installed, then the signed commits pushed. With the
    authority section that is a real push to main through the hook, which must
    accept it; main is then moved back to the base, so the hook can be run
    again on the same update. Without, the commits go to an unprotected ref."""
    client = os.path.join(tmp, f"{name}-client")
    base, tip = build_client(client, CONTRACT + (AUTHORITY if authority else ""), signer)
    server = os.path.join(tmp, f"{name}.git")
    git("init", "-q", "--bare", "-b", "main", server)
    git("push", "-q", server, "main", cwd=client)
    subprocess.run(
        [sys.executable, "-m", "oracle_guard", "install-pre-receive", server],
        check=True,
        stdout=subprocess.DEVNULL,
        env=PUSH_ENV,
    )
    target = "signed:main" if authority else "signed:refs/pushed/signed"
    start = time.perf_counter()
    proc = subprocess.run(
        ["git", "push", server, target],
        cwd=client,
        env=PUSH_ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    took = time.perf_counter() - start
    said = proc.stderr.decode(errors="replace")
    if proc.returncode != 0 or (authority and "push accepted" not in said):
        raise SystemExit(f"the push of the signed commits to {name} failed:\n{said}")
    if authority:
        git("update-ref", "refs/pushed/signed", tip, cwd=server)
        git("update-ref", "refs/heads/main", base, tip, cwd=server)
    shutil.rmtree(client)
    return (server, base, tip), took


# -- checks that the setup is what it says ---------------------------------------
def hook_command() -> List[str]:
    return [sys.executable, "-I", "-m", "oracle_guard", "pre-receive"]  # as the hook script


def expect_verdicts(signed: Tuple[str, str, str], plain: Tuple[str, str, str]) -> None:
    for (server, base, tip), accepted in ((signed, True), (plain, False)):
        proc = subprocess.run(
            hook_command(),
            cwd=server,
            env=PUSH_ENV,
            input=f"{base} {tip} refs/heads/main\n".encode(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        said = proc.stderr.decode(errors="replace")
        if accepted:
            ok = proc.returncode == 0 and "an owner signed every commit" in said
        else:  # rejected for the seed appends only: nothing per commit, no signature
            codes = {
                line.split(": ")[3]
                for line in said.splitlines()
                if line.count(": ") >= 4 and "fix:" not in line
            }
            ok = proc.returncode == 1 and codes == {"write-denied"}
        if not ok:
            raise SystemExit(
                f"pre-receive in {server} exited {proc.returncode}, not as expected:\n{said}"
            )


def reference_command(signers_file: str, base: str, tip: str) -> List[str]:
    return [
        "git",
        "-c",
        f"gpg.ssh.allowedSignersFile={signers_file}",
        "log",
        "--format=%G?",
        f"{base}..{tip}",
    ]


def expect_good(server: str, signers_file: str, base: str, tip: str) -> None:
    out = subprocess.run(
        reference_command(signers_file, base, tip),
        cwd=server,
        env=ENV,
        stdout=subprocess.PIPE,
        check=True,
    ).stdout.split()
    if out != [b"G"] * COMMITS:
        raise SystemExit(
            f"git log %G? did not report {COMMITS} good signatures: {sorted(set(out))}"
        )
    for commit in (base, tip):  # the base is unsigned; the tip must verify
        code = subprocess.run(
            ["git", "-c", f"gpg.ssh.allowedSignersFile={signers_file}", "verify-commit", commit],
            cwd=server,
            env=ENV,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        ).returncode
        if (code == 0) != (commit == tip):
            raise SystemExit(f"git verify-commit {commit} exited {code}")


# -- the profile -------------------------------------------------------------------
def profile(server: str, base: str, tip: str, signers_file: str) -> List[str]:
    """Where the hook's verification time goes: each commit read, split,
    parsed, verified and looked up in turn, oldest first, as
    authority.Authority._judge does it, in this process, each stage's time
    summed over the commits (the median of 5 passes, each with a fresh
    cat-file); and what importing `cryptography` costs a hook run."""
    from oracle_guard.authority import allowed_signers, sshsig
    from oracle_guard.git.plumbing import Git

    commits = git("rev-list", "--reverse", f"{base}..{tip}", cwd=server).decode().split()
    with open(signers_file) as f:
        signers = allowed_signers.parse(f.read())
    names = (
        "read the commit (cat-file --batch round trip)",
        "split payload and signature",
        "parse the SSHSIG armor and blob",
        "verify (ed25519, cryptography)",
        "allowed-signers lookup",
    )
    passes: List[List[float]] = []
    clock = time.perf_counter
    for _ in range(5):
        repo = Git(server)
        try:
            fmt = "sha256" if repo.object_id_length() == 64 else "sha1"
            repo.read_commit(base)  # the hook's cat-file is running before the first commit
            spent = [0.0] * len(names)
            for commit in commits:
                t0 = clock()
                raw = repo.read_commit(commit)
                t1 = clock()
                payload, armored = sshsig.split_commit(raw, fmt)
                t2 = clock()
                signature = sshsig.parse(armored)
                t3 = clock()
                verified = sshsig.verify(signature, payload, "git")
                t4 = clock()
                if allowed_signers.find(signers, verified.public_key, "git") is None:
                    raise SystemExit(f"{commit} is not signed by the owner")
                t5 = clock()
                for i, (a, b) in enumerate(((t0, t1), (t1, t2), (t2, t3), (t3, t4), (t4, t5))):
                    spent[i] += b - a
        finally:
            repo.close()
        passes.append(spent)
    importing = statistics.median(
        float(
            subprocess.run(
                [
                    sys.executable,
                    "-I",
                    "-c",
                    "import time; t = time.perf_counter(); "
                    "from cryptography.hazmat.primitives.asymmetric import ed25519; "
                    "from cryptography.exceptions import InvalidSignature; "
                    "print(time.perf_counter() - t)",
                ],
                stdout=subprocess.PIPE,
                check=True,
                env=ENV,
            ).stdout
        )
        for _ in range(5)
    )
    totals = [sum(p) for p in passes]
    lines = [
        f"profile of the verification, in-process, {len(commits):,} commits oldest first "
        f"(median of {len(passes)} passes; range of the sum over passes):"
    ]
    median_total = statistics.median(totals)
    for i, name in enumerate(names):
        seconds = statistics.median(p[i] for p in passes)
        lines.append(
            f"  {name:48s} {seconds * 1000:7.1f} ms  "
            f"{seconds / len(commits) * 1e6:6.1f} us a commit  "
            f"{seconds / median_total * 100:4.0f}%  ({spread([p[i] for p in passes])})"
        )
    lines.append(
        f"  {'sum':48s} {median_total * 1000:7.1f} ms  "
        f"{median_total / len(commits) * 1e6:6.1f} us a commit        "
        f"({spread(totals)})"
    )
    lines.append(
        f"  importing cryptography's ed25519, once a hook run (median of 5): "
        f"{importing * 1000:.1f} ms"
    )
    return lines


# -- the run -------------------------------------------------------------------
def spread(values: Sequence[float], scale: float = 1000.0, digits: int = 1) -> str:
    return f"{min(values) * scale:.{digits}f} to {max(values) * scale:.{digits}f}"


def samples(
    tmp: str, runs: int, profiled: bool = False
) -> Tuple[List[Sample], List[Sample], List[Sample], List[str]]:
    """The hook with the authority section, the same hook without it, and the
    reference, interleaved, after the setup the module docstring describes."""
    began = time.perf_counter()
    signer = Signer(tmp)
    signers_file = os.path.join(tmp, "allowed_signers")
    with open(signers_file, "w") as f:
        f.write(f"alice {signer.public_line}\n")
    signed, pushed = build_server(tmp, "signed", True, signer)
    plain, _ = build_server(tmp, "plain", False, signer)
    expect_verdicts(signed, plain)
    expect_good(signed[0], signers_file, signed[1], signed[2])
    print(
        f"setup: {COMMITS:,} signed commits ({COMMITS // ORACLE_EVERY} seed appends) "
        f"in each of two bare repositories, in {time.perf_counter() - began:.1f} s; "
        f"git log %G? reports all {COMMITS:,} 'G'; the real push to main through the "
        f"hook was accepted in {pushed * 1000:.0f} ms (once, cold cache)",
        flush=True,
    )

    def hook(server: str, base: str, tip: str) -> Callable[[], Sample]:
        stdin = f"{base} {tip} refs/heads/main\n".encode()
        return bench_scale.command(hook_command(), server, PUSH_ENV, stdin)

    def plain_hook() -> Sample:
        """The baseline exits 1 (rejected), which bench_scale.measure refuses:
        timed here the same way."""
        stdin = f"{plain[1]} {plain[2]} refs/heads/main\n".encode()
        wrapped = (
            [bench_scale.GNU_TIME, "-f", "%M", "-o", os.path.join(tmp, "rss")]
            if bench_scale.GNU_TIME
            else []
        ) + hook_command()
        with tempfile.TemporaryFile() as out:
            start = time.perf_counter()
            code = subprocess.run(
                wrapped, cwd=plain[0], env=PUSH_ENV, input=stdin, stdout=out, stderr=out
            ).returncode
            elapsed = time.perf_counter() - start
        if code != 1:
            raise SystemExit(f"the baseline hook exited {code}, not 1")
        rss = float("nan")
        if bench_scale.GNU_TIME:
            with open(os.path.join(tmp, "rss")) as f:
                rss = float(f.read().split()[-1]) / 1024
        return Sample(elapsed, rss)

    with_sigs, without, reference = bench_scale.interleaved(
        [
            hook(*signed),
            plain_hook,
            bench_scale.command(reference_command(signers_file, signed[1], signed[2]), signed[0]),
        ],
        runs,
    )
    return with_sigs, without, reference, profile(*signed, signers_file) if profiled else []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs per job (default 7)")
    parser.add_argument(
        "--no-profile",
        action="store_true",
        help="skip the stage-by-stage profile of the verification",
    )
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    print(bench_scale.header(args.runs, False), flush=True)
    began = time.perf_counter()

    with tempfile.TemporaryDirectory(prefix="oracle-guard-bench-signed-") as tmp:
        with_sigs, without, reference, profiled = samples(tmp, args.runs, not args.no_profile)

    seconds = {
        name: [s.seconds for s in samples]
        for name, samples in (("with", with_sigs), ("without", without), ("reference", reference))
    }
    med = {name: statistics.median(values) for name, values in seconds.items()}
    added = med["with"] - med["without"]
    ratio = added / med["reference"]
    # the same quantities run by run (each run is one of each, back to back)
    added_runs = [a - b for a, b in zip(seconds["with"], seconds["without"])]
    ratio_runs = [a / r for a, r in zip(added_runs, seconds["reference"])]
    print(
        f"pre-receive on a push of {COMMITS:,} owner-signed commits "
        f"({COMMITS // ORACLE_EVERY} seed appends); medians, and the range over the runs:"
    )
    print(
        f"  {'the hook, authority section (accepted)':52s} {med['with'] * 1000:8.1f} ms  "
        f"({spread(seconds['with'])})   max RSS {bench_scale.peak(with_sigs):5.1f} MiB"
    )
    print(
        f"  {'the hook, no authority section (rejected)':52s} "
        f"{med['without'] * 1000:8.1f} ms  ({spread(seconds['without'])})   "
        f"max RSS {bench_scale.peak(without):5.1f} MiB"
    )
    print(
        f"  {'added by verifying the signatures':52s} {added * 1000:8.1f} ms  "
        f"({spread(added_runs)} run by run) = {added / COMMITS * 1e6:.0f} us a commit"
    )
    print(
        f"  {'git log --format=%G? over the range (ssh-keygen)':52s} "
        f"{med['reference'] * 1000:8.1f} ms  ({spread(seconds['reference'])}) = "
        f"{med['reference'] / COMMITS * 1e3:.2f} ms a commit"
    )
    print(
        f"  ratio {ratio:.3f}x ({spread(ratio_runs, 1, 3)}x run by run) "
        f"(goal <= {GOAL}x): {bench_scale.verdict(ratio <= GOAL)} the goal"
    )
    for line in profiled:
        print(line)
    print(f"total {time.perf_counter() - began:.0f} s (temporary folders removed)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
