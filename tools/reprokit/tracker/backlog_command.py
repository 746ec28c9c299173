"""`reprokit backlog` as the command line asks it: the issues of a folder (or of a gh query, saved first as such a
folder) judged by one shard into OUT, or the shards' OUT folders merged (each issue once, its newest judgement, with
its draft) into one; either way the list is rendered, OUT/backlog.md.

An OUT folder holds backlog.jsonl (the journal), drafts/issue-N-comment.md, shard.json (the idents the last run took:
the set the list shows) and backlog.md."""

from __future__ import annotations

import dataclasses
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from reprokit.model.choices import TRIAGE_TIMEOUT
from reprokit.model.schema import InputError
from reprokit.publish import backlog_page
from reprokit.run.request import load_root_matrix, target_of
from reprokit.store import backlog_journal
from reprokit.store.backlog_journal import DRAFTS, JOURNAL, PREVIOUS, Judgement
from reprokit.tracker import backlog_fetch, triage_request
from reprokit.tracker.backlog_select import ALL, Shard, needs_a_gpu, read_folder
from reprokit.tracker.backlog_shard import default_jobs, run_shard

PAGE = "backlog.md"
SET = "shard.json"


@dataclass(frozen=True)
class BacklogAsk:
    out: str | None
    issues_json: str | None = None
    labels: tuple[str, ...] = ()
    state: str = "open"
    limit: int = 100
    save: str | None = None  # where a gh query's files go (default OUT/issues)
    fetch_only: bool = False
    shard: str = "1/1"
    merge: tuple[str, ...] = ()
    previous: str | None = None
    target: str = "cpu"
    releases: tuple[str, ...] = ()
    here: bool = False
    timeout: float = TRIAGE_TIMEOUT
    jobs: int | None = None
    needs_gpu: bool = False  # only the issues whose script needs a CUDA GPU (backlog_select.needs_a_gpu)


def backlog(root: Path, ask: BacklogAsk, say=print, log=print) -> int:
    """The one call of `reprokit backlog`: fetch, judge a shard, or merge; then render. `say` gets the summary."""
    online = bool(ask.labels)
    if sum((online, bool(ask.issues_json), bool(ask.merge))) != 1:
        raise InputError("backlog: give one of --issues-json DIR, --label L (a gh query), --merge DIR...")
    if ask.out is None and not ask.fetch_only:
        raise InputError("backlog: --out DIR is needed (the journal, the drafts and the list go there)")
    if ask.fetch_only and not online:
        raise InputError("backlog: --fetch-only goes with a gh query (--label ...)")
    if ask.merge:
        return merge([Path(d) for d in ask.merge], Path(ask.out or ""), _previous(ask), say)
    if ask.here and ask.releases:
        raise InputError("backlog: --here runs this torch alone; --releases names others: give one of them")
    shard = Shard.parse(ask.shard) if ask.shard else ALL
    matrix = load_root_matrix(root)
    target_of(matrix, ask.target)
    if online:
        folder = Path(ask.save or Path(ask.out or ".") / "issues")
        backlog_fetch.fetch(folder, ask.labels, ask.state, ask.limit, log=log)
        if ask.fetch_only:
            say(f"saved the issues in {folder}: `reprokit backlog --issues-json {folder} --out DIR` judges them")
            return 0
    else:
        folder = Path(ask.issues_json or "")
    out = Path(ask.out or "").resolve()
    entries = read_folder(folder.resolve())
    if ask.needs_gpu:
        entries = [e for e in entries if needs_a_gpu(e)]
    request = triage_request.Request(
        target=ask.target, releases=tuple(ask.releases), here=ask.here, timeout=ask.timeout
    )
    done = run_shard(entries, shard, request, matrix, out, ask.jobs or default_jobs(), ours=(root.resolve(),), log=log)
    (out / SET).write_text(
        json.dumps({"shard": f"{shard.index}/{shard.count}", "idents": done.taken}) + "\n", encoding="utf-8"
    )
    current = _taken(backlog_journal.newest(backlog_journal.read(out / JOURNAL)), done.taken)
    page = write_page(
        out,
        current,
        _taken(done.before, done.taken) if done.before else None,
        f"The backlog, shard {shard.index}/{shard.count}",
    )
    say(
        f"shard {shard.index}/{shard.count}: {len(done.taken)} issues, {done.judged} judged now, {done.skipped} "
        f"judged before on the same text and releases; the list: {page}"
    )
    return 0


def _previous(ask: BacklogAsk) -> Path | None:
    return Path(ask.previous) if ask.previous else None


def _taken(judgements: dict[str, Judgement], idents: list[str]) -> list[Judgement]:
    return [judgements[i] for i in idents if i in judgements]


def write_page(out: Path, current: list[Judgement], previous: list[Judgement] | None, title: str) -> Path:
    page = out / PAGE
    page.write_text(
        backlog_page.render(current, {j.ident: j for j in previous} if previous is not None else None, title),
        encoding="utf-8",
    )
    return page


def shard_judgements(folder: Path) -> list[Judgement]:
    """A shard's OUT folder: the newest judgement of each issue it took last (all it holds, without shard.json)."""
    if not (folder / JOURNAL).is_file():
        raise InputError(f"--merge {folder}: no {JOURNAL} (a folder `reprokit backlog --shard K/N --out` wrote)")
    kept = backlog_journal.newest(backlog_journal.read(folder / JOURNAL))
    try:
        idents = json.loads((folder / SET).read_text(encoding="utf-8"))["idents"]
    except (OSError, ValueError, KeyError, TypeError):
        return list(kept.values())
    return _taken(kept, [i for i in idents if isinstance(i, str)])


def merge(folders: list[Path], out: Path, previous_file: Path | None, say=print) -> int:
    """The shards' judgements, each issue once (its newest), with their drafts, into OUT; the list rendered with
    what changed since the list OUT held before (or --previous FILE, a merged backlog.jsonl)."""
    out = out.resolve()
    if any(f.resolve() == out for f in folders):
        raise InputError(f"--merge: {out} is both a shard and --out: merge into a folder of its own")
    found: list[tuple[Judgement, Path]] = [(j, f) for f in folders for j in shard_judgements(f)]
    chosen = backlog_journal.newest([j for j, _ in found])
    source = {id(j): f for j, f in found}
    if previous_file is not None and not previous_file.is_file():
        raise InputError(f"--previous {previous_file}: no such file (a merged {JOURNAL})")
    earlier = backlog_journal.read(previous_file or out / JOURNAL)
    had_list = previous_file is not None or (out / JOURNAL).is_file()
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out / DRAFTS, ignore_errors=True)
    (out / DRAFTS).mkdir()
    merged = []
    for j in sorted(chosen.values(), key=lambda j: backlog_page.order_of(j.ident)):
        if j.draft is not None and (draft := source[id(j)] / DRAFTS / j.draft).is_file():
            shutil.copyfile(draft, out / DRAFTS / j.draft)
        elif j.draft is not None:  # the shard's folder lost it: the list links no missing file
            j = dataclasses.replace(j, draft=None)
        merged.append(j)
    if had_list:
        backlog_journal.write_whole(out / PREVIOUS, earlier)
    backlog_journal.write_whole(out / JOURNAL, merged)
    (out / SET).write_text(
        json.dumps({"shard": "merged", "idents": [j.ident for j in merged]}) + "\n", encoding="utf-8"
    )
    page = write_page(out, merged, earlier if had_list else None, "The backlog")
    say(f"merged {len(folders)} shards: {len(merged)} issues; the list: {page}")
    return 0
