"""LoCoMo loading and ingestion helpers, shared by the search benchmark (bench/locomo_search.py), the CI slice
test (tests/test_locomo_slice.py) and later HTTP benchmarks.

Data: ../shared/benchdata/locomo/locomo_dev7.json (beside the repo) (see its README.md; Maharana et al., ACL 2024). Each
conversation goes into its own tenant through `services.graph`: every turn is an episode (content = text plus
"[shares <blip caption>]" for images; speaker; occurred_at = the session's date + the turn's index in seconds, so
the NEXT chain keeps dialogue order; session_id = "session_<n>"; idempotency key = the turn's dia_id), and every
observation is an `OBSERVED` fact (subject = the speaker as a Person, value = the observation text) derived from
the turn it cites. Scoring is done only by ../shared/tools/locomo_recall.py.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from bench.common import provenance as machine  # noqa: F401  (re-exported: results-file header)
from graphmem.models import EntityRef, EpisodeIn, FactIn

ROOT = Path(__file__).resolve().parents[1]
_BESIDE = Path(__file__).resolve().parents[2] / "shared"   # the workspace's shared/ folder, beside the repo
WORKSPACE_SHARED = Path("/work/shared")
"""Where the workspace keeps shared/ on these machines: a clone made elsewhere (CI's clean clone, a temporary
directory) has no shared/ beside it, and the LoCoMo regression slice would be skipped there."""
SHARED = _BESIDE if _BESIDE.is_dir() or not WORKSPACE_SHARED.is_dir() else WORKSPACE_SHARED
DATA = Path(os.environ.get("LOCOMO_DATA", SHARED / "benchdata" / "locomo" / "locomo_dev7.json"))
SCORER = Path(os.environ.get("LOCOMO_SCORER", SHARED / "tools" / "locomo_recall.py"))
_ID = re.compile(r"D:?(\d+):(\d+)")


def load(path: Path = DATA) -> list[dict]:
    """The LoCoMo samples (list of dicts, unchanged)."""
    return json.loads(Path(path).read_text())


def session_time(text: str) -> datetime:
    """"1:56 pm on 8 May, 2023" -> aware UTC datetime (the dataset gives no zone; UTC is assumed)."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def norm_dia(dia_id: str) -> str | None:
    """Normalise a dia_id as the scorer does ("D:11:26" -> "D11:26"); None if malformed."""
    m = _ID.search(str(dia_id))
    return f"D{int(m.group(1))}:{int(m.group(2))}" if m else None


def turns(sample: dict) -> list[dict]:
    """Turns in order: [{dia_id, speaker, text, session, occurred_at}] (image captions appended to the text)."""
    conv = sample["conversation"]
    keys = sorted((k for k in conv if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1]))
    out = []
    for k in keys:
        start = session_time(conv[f"{k}_date_time"])
        for i, t in enumerate(conv[k]):
            text = t["text"] + (f" [shares {t['blip_caption']}]" if t.get("blip_caption") else "")
            out.append({"dia_id": t["dia_id"], "speaker": t["speaker"], "text": text, "session": k,
                        "occurred_at": start + timedelta(seconds=i)})
    return out


def observations(sample: dict) -> list[tuple[str, str, str]]:
    """(speaker, observation text, cited dia_id) for every observation whose dia_id is a real turn."""
    ids = {t["dia_id"] for t in turns(sample)}
    out = []
    for _, by_speaker in sorted(sample.get("observation", {}).items()):
        for speaker, items in by_speaker.items():
            for text, dia in items:
                for d in ([dia] if isinstance(dia, str) else dia):
                    nd = norm_dia(d)
                    if nd in ids and str(text).strip():
                        out.append((speaker, str(text).strip(), nd))
                        break
    return out


@dataclass
class Ingested:
    """A conversation in its tenant: episode id <-> dia_id maps and counts."""

    sample_id: str
    tenant_id: str
    episode_of: dict[str, str] = field(default_factory=dict)  # dia_id -> episode id
    dia_of: dict[str, str] = field(default_factory=dict)  # episode id -> dia_id
    facts: int = 0


def ingest(graph, tenant_id: str, sample: dict, *, with_observations: bool = True, batch: int = 200) -> Ingested:
    """Ingest one LoCoMo sample into `tenant_id` through `TemporalGraph` (idempotent by dia_id)."""
    out = Ingested(sample["sample_id"], tenant_id)
    for t in turns(sample):
        ep, _ = graph.append_episode(tenant_id, EpisodeIn(
            kind="message", content=t["text"], occurred_at=t["occurred_at"], session_id=t["session"],
            user_id=sample["sample_id"], role="user", speaker=t["speaker"], idempotency_key=t["dia_id"]))
        out.episode_of[t["dia_id"]] = ep.id
        out.dia_of[ep.id] = t["dia_id"]
    if with_observations:
        facts = [FactIn(subject=EntityRef(kind="Person", name=spk), predicate="OBSERVED", value=text,
                        statement=text, episode_id=out.episode_of[dia], source="inferred", confidence=0.9)
                 for spk, text, dia in observations(sample)]
        for i in range(0, len(facts), batch):
            outcomes = graph.assert_facts(tenant_id, facts[i:i + batch])
            out.facts += sum(o.action == "created" for o in outcomes)
    return out


def questions(sample: dict) -> list[tuple[int, dict]]:
    """(qa_index, qa item) for every question (the scorer decides which are scorable)."""
    return list(enumerate(sample["qa"]))


def ranked_dia_ids(hits, dia_of: dict[str, str], *, neighbours: dict[str, list[str]] | None = None,
                   neighbour_weight: float = 0.0, depth: int = 50) -> list[str]:
    """Search hits -> ranked dia_ids. An episode is its turn; a fact expands to the turns it was derived from.
    A turn's score is the sum of the fused scores of the hits pointing at it (a turn found as an episode and
    through an observation ranks higher than either alone). With `neighbours` (dia_id -> adjacent dia_ids along
    the session's NEXT order) each hit also lends `neighbour_weight` x its score to its adjacent turns."""
    score: dict[str, float] = {}
    first: dict[str, int] = {}
    for pos, h in enumerate(hits):
        for eid in h.episode_ids:
            d = dia_of.get(eid)
            if d is None:
                continue
            score[d] = score.get(d, 0.0) + h.score
            first.setdefault(d, pos)
            if neighbours and neighbour_weight:
                for n in neighbours.get(d, []):
                    score[n] = score.get(n, 0.0) + neighbour_weight * h.score
                    first.setdefault(n, len(hits) + pos)
    return sorted(score, key=lambda d: (-score[d], first[d]))[:depth]


def score(pred_path: Path, out_json: Path, data: Path = DATA) -> dict:
    """Run the official scorer on a predictions JSONL; returns its JSON result."""
    subprocess.run(["python3", str(SCORER), str(data), str(pred_path), "--json", str(out_json)], check=True,
                   capture_output=True, text=True)
    return json.loads(out_json.read_text())


def bm25_baseline(out_json: Path, data: Path = DATA) -> dict:
    """The scorer's own BM25-over-turns baseline on the same data."""
    subprocess.run(["python3", str(SCORER), str(data), "--bm25", "--json", str(out_json)], check=True,
                   capture_output=True, text=True)
    return json.loads(out_json.read_text())


