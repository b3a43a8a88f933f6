"""``comments`` (issue 33): does the comment sync of 1,000 accounts × 50 young posts keep within
each platform's read budget and read each post within its interval, on the 2 cores?

- **Set-up**: one account per platform that reads comments connected through the real
  connect-link flow and ``posts`` posts published through the API and the worker on all but Google
  Business (text on the six that take text alone, a short vertical video as an Instagram Reel and
  a YouTube Short; the simulators then know the posts and grow their audiences under them).
  ``accounts`` accounts are then seeded with SQL, spread over the nine platforms, each a copy of
  its platform's connected account (so its token is valid on the simulator) in a workspace of its
  own. An account on a platform with posts has ``posts`` published entries (the published posts'
  remote ids: comments are kept per account, so accounts may share them), published 6 to 60
  minutes ago, and a ``CommentSource`` each; a Google Business account has its review feed (the
  location's reviews, read hourly: its posts take no comments). TikTok reads no comments
  (``GET /platforms``), Pinterest and Telegram have no comment API.
- **Steady state**: each account's sources are seeded as if they had been read one target
  interval (``engagement.cadence``, stretched to the budget) before their due time, incrementally
  (``since`` and the day's full pass at that read: each read asks for what is newer), their due
  times spread evenly over that interval from the start on, as a deployment past its first hour
  has them (sources published together and all due at once would stay together).
- **Measured** for ``seconds`` while web, worker, beat and the simulators run: every finished
  read (the sources' ``last_synced_at``, sampled every ``SAMPLE_SECONDS``) with the interval since
  the read before it and its lateness behind its due time; the due backlog and its lag; the
  accounts' read counters in Redis (``engagement.budget``: reads per account-hour, and the
  largest count in one clock hour against the hard limit); the simulators' 429 answers; the CPU
  of worker, PostgreSQL, Redis, beat and the simulators.

A platform is within budget when no account read more than its budget per hour (extrapolated
from the window, and in any one clock hour) and nothing answered 429; within its interval when
the p95 of the achieved intervals is at most ``INTERVAL_SLACK`` over the target."""

from __future__ import annotations

import datetime as dt
import math
import secrets
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import seed
from bench.context import Bench
from bench.report import Report, percentile

# Every platform that reads comments: those whose posts can be plain text, those whose posts need
# media (one short vertical video: an Instagram Reel, a YouTube Short), and Google Business, which
# reads its location's reviews instead of its posts' comments.
TEXT_PLATFORMS = ("TWITTER", "BLUESKY", "MASTODON", "THREADS", "LINKEDIN", "FACEBOOK")
VIDEO_PLATFORMS = ("INSTAGRAM", "YOUTUBE")
ENTRY_PLATFORMS = (*TEXT_PLATFORMS, *VIDEO_PLATFORMS)
REVIEW_PLATFORM = "GOOGLE_BUSINESS"
PLATFORMS = (*ENTRY_PLATFORMS, REVIEW_PLATFORM)
VIDEO_SIZE = (720, 1280)
VIDEO_SECONDS = 4.0
DEFAULT_ACCOUNTS = 1000
DEFAULT_POSTS = 50
DEFAULT_SECONDS = 900
SAMPLE_SECONDS = 5.0
LEAD_SECONDS = 10  # after seeding, before the first source falls due
PUBLISH_WAIT_SECONDS = 600
INTERVAL_SLACK = 0.10
PREFIX = "cm"


@dataclass
class Plan:
    """What one platform's accounts should do: their budget, demand, stretch and target interval."""

    platform: str
    budget: int
    demand: float
    stretch: float
    interval_seconds: float
    listings: int = 1  # the platform calls one read makes (``Capabilities.comment_listings``)

    def allowed_in(self, seconds: float) -> int:
        """The most calls the budget lets one account make in a window of ``seconds``: its share
        of the hourly budget, rounded up to whole reads (a read's ``listings`` calls come together,
        so a short window that opens and closes on reads holds one read more than the mean)."""
        return math.ceil(self.budget * seconds / 3600 / self.listings) * self.listings


@dataclass
class Observed:
    """Reads seen by the sampler, per platform."""

    intervals: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    lateness: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    reads: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    backlog: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    lag: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    samples: int = 0


def plans(posts: int) -> dict[str, Plan]:
    """The target of each platform for an account with ``posts`` young entries."""
    from engagement import budget, cadence
    from platforms.base import Platform
    from platforms.capabilities import CAPABILITIES

    young = cadence.CADENCE[0][1].total_seconds()
    idle = [0] * len(cadence.CADENCE)
    result = {}
    for platform in PLATFORMS:
        limit = budget.limit_of(platform)
        listings = CAPABILITIES[Platform(platform)].comment_listings
        if platform == REVIEW_PLATFORM:
            wanted = cadence.demand(per_band=idle, reviews=1, listings=listings)
            every = cadence.REVIEWS_EVERY.total_seconds()
        else:
            wanted, every = cadence.demand(per_band=[posts, *idle[1:]], listings=listings), young
        factor = cadence.stretch(wanted, limit)
        result[platform] = Plan(platform, limit, wanted, factor, every * factor, listings)
    return result


# --- set-up --------------------------------------------------------------------------------


def publish_templates(bench: Bench, posts: int) -> dict[str, dict[str, Any]]:
    """One connected account per platform and ``posts`` posts published through the API and the
    worker: text on :data:`TEXT_PLATFORMS`, one uploaded short vertical video on
    :data:`VIDEO_PLATFORMS` (none on Google Business, whose reviews are read). Returns
    ``{platform: {"account": id, "remoteIds": [...]}}``."""
    from posts.models import PostTarget
    from posts.payloads import CONNECTION_FIELDS

    workspace_id, key = bench.workspace("bench comments")
    accounts = {platform: bench.connect_account(key, platform) for platform in PLATFORMS}
    video = upload_video(bench, key)
    run = secrets.token_hex(3)
    for index in range(posts):
        text = f"Comment bench {run} post {index}: what do you think?"
        bodies: list[dict[str, Any]] = [
            {"contentType": "TEXT", "text": text, "platforms": list(TEXT_PLATFORMS)},
            {
                "contentType": "VIDEO",
                "text": text,
                "mediaUrls": [video],
                "platforms": list(VIDEO_PLATFORMS),
                "instagramConfigs": [{"connectionId": accounts["INSTAGRAM"], "postType": "REEL"}],
                "youtubeConfigs": [
                    {"connectionId": accounts["YOUTUBE"], "videoTitle": f"Bench {index}", "privacyStatus": "public"}
                ],
            },
        ]
        for body in bodies:
            body["timezone"] = "UTC"
            for platform in body["platforms"]:
                body[CONNECTION_FIELDS[platform]] = [accounts[platform]]
            response = bench.api("POST", "/social-posts", key, json=body)
            if response.status_code != 201:
                raise RuntimeError(f"creating a template post answered {response.status_code}: {response.text[:500]}")
    wanted = posts * len(ENTRY_PLATFORMS)
    deadline = time.monotonic() + PUBLISH_WAIT_SECONDS
    entries = PostTarget.objects.filter(post__workspace_id=workspace_id)
    while time.monotonic() < deadline:
        if entries.filter(status__in=["PUBLISHED", "FAILED"]).count() >= wanted:
            break
        time.sleep(1.0)
    published = entries.filter(status="PUBLISHED").exclude(platform_post_id="")
    found: dict[str, dict[str, Any]] = {p: {"account": a, "remoteIds": []} for p, a in accounts.items()}
    for platform, remote_id in published.order_by("created_at", "id").values_list("platform", "platform_post_id"):
        found[platform]["remoteIds"].append(remote_id)
    missing = {p: posts - len(found[p]["remoteIds"]) for p in ENTRY_PLATFORMS if len(found[p]["remoteIds"]) < posts}
    if missing:
        failed = list(entries.filter(status="FAILED").values_list("platform", "error_code")[:5])
        raise RuntimeError(f"template posts not published in {PUBLISH_WAIT_SECONDS} s: {missing}; failed: {failed}")
    return found


def upload_video(bench: Bench, key: str) -> str:
    """A short vertical H.264 video (:func:`bench.scenarios.media.make_video`) uploaded through
    ``POST /upload-urls``; its public URL."""
    from bench.scenarios.media import make_video

    with tempfile.TemporaryDirectory() as directory:
        path = make_video(Path(directory) / "bench-reel.mp4", VIDEO_SIZE, VIDEO_SECONDS)
        data = path.read_bytes()
    answer = bench.api(
        "POST", "/upload-urls", key, json={"files": [{"fileName": "bench-reel.mp4", "mimeType": "video/mp4"}]}
    )
    answer.raise_for_status()
    item = answer.json()["urls"][0]
    put = bench.session.put(item["uploadUrl"], data=data, headers={"Content-Type": "video/mp4"}, timeout=120)
    put.raise_for_status()
    return str(item["publicUrl"])


def seed_comments(
    templates: dict[str, dict[str, Any]],
    *,
    accounts: int,
    posts: int,
    plan: dict[str, Plan],
    start: float,
    first_due_within: float | None = None,
) -> dict[str, Any]:
    """The accounts, their posts and entries, and the sources, with ``INSERT … SELECT``. The first
    due times are spread over each platform's target interval (over ``first_due_within`` seconds
    when that is shorter: a short run that must see reads)."""
    from accounts.models import SocialAccount
    from engagement.models import CommentSource
    from posts.models import Post, PostTarget

    timer = seed.Timer()
    seed.workspaces(PREFIX, accounts)
    count = len(PLATFORMS)
    template_ids = [templates[p]["account"] for p in PLATFORMS]
    copied = {
        f.column: f"t.{seed._q(f.column)}"
        for f in SocialAccount._meta.concrete_fields
        if f.column not in ("id", "workspace_id", "created_at", "updated_at")
    }
    seed.insert_select(
        SocialAccount,
        source=(
            f"generate_series(0, {accounts - 1}) g JOIN accounts_socialaccount t "
            f"ON t.id = (%(templates)s::text[])[mod(g, {count}) + 1]"
        ),
        exprs={**copied, "id": f"'acc_{PREFIX}_' || g", "workspace_id": f"'ws_{PREFIX}_' || g"},
        params={"templates": template_ids},
    )
    # Remote ids per platform with posts, flattened: the j-th entry of an account on platform k
    # reads remote[k * posts + j]. A Google Business account (k = ENTRY count) has no entries.
    remote = [rid for p in ENTRY_PLATFORMS for rid in templates[p]["remoteIds"][:posts]]
    g, j, k = f"(h / {posts})", f"mod(h, {posts})", f"mod(h / {posts}, {count})"
    rows = f"generate_series(0, {accounts * posts - 1}) h WHERE {k} < {len(ENTRY_PLATFORMS)}"
    published_at = "now() - make_interval(mins => 6 + mod(h * 7, 55))"
    seed.insert_select(
        Post,
        source=rows,
        exprs={
            "id": f"'post_{PREFIX}_' || h",
            "workspace_id": f"'ws_{PREFIX}_' || {g}",
            "status": "'COMPLETED'",
            "content_type": "'TEXT'",
            "text": "'Comment bench post ' || h",
            "timezone": "'UTC'",
        },
    )
    seed.insert_select(
        PostTarget,
        source=rows,
        exprs={
            "id": f"'pt_{PREFIX}_' || h",
            "post_id": f"'post_{PREFIX}_' || h",
            "platform": f"(%(platforms)s::text[])[{k} + 1]",
            "account_id": f"'acc_{PREFIX}_' || {g}",
            "status": "'PUBLISHED'",
            "text": "'Comment bench post ' || h",
            "platform_post_id": f"(%(remote)s::text[])[{k} * {posts} + {j} + 1]",
            "published_at": published_at,
        },
        params={"platforms": list(PLATFORMS), "remote": remote},
    )
    # Due times spread evenly over each account's target interval (shifted per account), the read
    # before each one target interval earlier. That read was incremental, and the day's full pass
    # is behind it: each read asks for what the audience wrote since the read before, as in a
    # deployment past its first hour (a post's first read, 5 minutes after publishing, stores
    # what came so far).
    interval = f"(%(intervals)s::float8[])[{k} + 1]"
    spread = f"(%(spreads)s::float8[])[{k} + 1]"
    due = f"to_timestamp(%(start)s + {spread} * ({j} + mod({g} * 7, 10) / 10.0) / {posts})"
    read = f"{due} - make_interval(secs => {interval})"
    timing = {
        "intervals": [plan[p].interval_seconds for p in PLATFORMS],
        "spreads": [min(plan[p].interval_seconds, first_due_within or math.inf) for p in PLATFORMS],
        "start": start,
    }
    seed.insert_select(
        CommentSource,
        source=f"posts_posttarget t, LATERAL (SELECT substr(t.id, {len(PREFIX) + 5})::int AS h) n "
        f"WHERE t.id LIKE 'pt\\_{PREFIX}\\_%%'",
        exprs={
            "id": f"'csrc_{PREFIX}_' || h",
            "workspace_id": f"'ws_{PREFIX}_' || {g}",
            "account_id": "t.account_id",
            "platform": "t.platform",
            "target_id": "t.id",
            "platform_post_id": "t.platform_post_id",
            "published_at": "t.published_at",
            "next_due_at": due,
            "last_synced_at": read,
            "since": read,
            "full_synced_at": read,
        },
        params=timing,
    )
    # The Google Business accounts' review feeds (no entry, no publishing time), as
    # ``sources_discover`` makes them; the feed of account a is timed as the entry of it
    # h = a * posts + j would be (j: the account's rank among the feeds), so the feeds' due times
    # spread over their interval as the entries' do.
    feeds = seed.insert_select(
        CommentSource,
        source=f"generate_series(0, {accounts - 1}) a, LATERAL (SELECT a * {posts} + mod(a / {count}, {posts}) AS h) n "
        f"WHERE mod(a, {count}) = {len(ENTRY_PLATFORMS)}",
        exprs={
            "id": f"'csrc_{PREFIX}_r' || a",
            "workspace_id": f"'ws_{PREFIX}_' || a",
            "account_id": f"'acc_{PREFIX}_' || a",
            "platform": f"'{REVIEW_PLATFORM}'",
            "next_due_at": due,
            "last_synced_at": read,
            "since": read,
            "full_synced_at": read,
        },
        params=timing,
    )
    seed.settle(SocialAccount, Post, PostTarget, CommentSource)
    sources = CommentSource.objects.filter(account__id__startswith=f"acc_{PREFIX}_").count()
    return {
        "accounts": accounts,
        "postsPerAccount": posts,
        "sources": sources,
        "reviewFeeds": feeds,
        "seconds": timer.seconds,
    }


# --- observing -----------------------------------------------------------------------------

READS_SQL = f"""
SELECT id, platform, EXTRACT(EPOCH FROM last_synced_at), EXTRACT(EPOCH FROM next_due_at)
FROM engagement_commentsource WHERE account_id LIKE 'acc\\_{PREFIX}\\_%%' AND last_synced_at > to_timestamp(%s)
"""
KNOWN_SQL = f"""
SELECT id, EXTRACT(EPOCH FROM last_synced_at), EXTRACT(EPOCH FROM next_due_at)
FROM engagement_commentsource WHERE account_id LIKE 'acc\\_{PREFIX}\\_%%'
"""
BACKLOG_SQL = f"""
SELECT platform, count(*), COALESCE(EXTRACT(EPOCH FROM now() - min(next_due_at)), 0)
FROM engagement_commentsource
WHERE account_id LIKE 'acc\\_{PREFIX}\\_%%' AND next_due_at <= now() AND lease_until IS NULL
GROUP BY platform
"""


def observe(bench: Bench, *, seconds: float, start: float) -> Observed:
    """Sample the sources until ``start + seconds``: each changed ``last_synced_at`` is a finished
    read, its interval measured from the read before it, its lateness from the due time it had."""
    observed = Observed()
    known = {row[0]: (float(row[1] or 0), float(row[2] or 0)) for row in bench.sql(KNOWN_SQL)}
    since = start - 1
    end = start + seconds
    while True:
        tick = time.time()
        for source_id, platform, read_at, next_due in bench.sql(READS_SQL, [since]):
            previous_read, previous_due = known.get(source_id, (0.0, 0.0))
            read_at = float(read_at)
            if read_at <= previous_read:
                continue
            observed.reads[platform] += 1
            if previous_read:
                observed.intervals[platform].append(read_at - previous_read)
            if previous_due:
                observed.lateness[platform].append(max(read_at - previous_due, 0.0))
            known[source_id] = (read_at, float(next_due or 0))
        since = tick - 2 * SAMPLE_SECONDS  # a pass that finished while the sample ran
        for platform, waiting, lag in bench.sql(BACKLOG_SQL):
            observed.backlog[platform] = max(observed.backlog[platform], int(waiting))
            observed.lag[platform] = max(observed.lag[platform], float(lag))
        observed.samples += 1
        if tick >= end:
            return observed
        time.sleep(max(0.0, min(SAMPLE_SECONDS - (time.time() - tick), end - time.time())))


def budget_counters(bench: Bench, *, accounts: int, start: float, end: float) -> dict[int, list[int]]:
    """Each seeded account's read counters (``engagement.budget``) for the clock hours of the run:
    ``{account number: [reads in each hour]}``."""
    from engagement.budget import WINDOW_SECONDS

    windows = list(range(int(start // WINDOW_SECONDS), int(end // WINDOW_SECONDS) + 1))
    redis = bench.stack.redis.client(0)
    keys = [f"engagement:reads:acc_{PREFIX}_{n}:{w}" for n in range(accounts) for w in windows]
    values = redis.mget(keys) if keys else []
    counts: dict[int, list[int]] = {}
    for index, value in enumerate(values):
        counts.setdefault(index // len(windows), []).append(int(value or 0))
    return counts


def rate_limited_answers(bench: Bench) -> dict[str, int]:
    """429 answers in each simulator's request log since it was cleared."""
    return {p: sum(1 for e in bench.sandbox_requests(p.lower()) if int(e.get("status", 0)) == 429) for p in PLATFORMS}


# --- the scenario --------------------------------------------------------------------------


def run(
    bench: Bench,
    *,
    accounts: int = DEFAULT_ACCOUNTS,
    posts: int = DEFAULT_POSTS,
    seconds: float = DEFAULT_SECONDS,
    first_due_within: float | None = None,
) -> Report:
    report = Report("comments")
    plan = plans(posts)
    started = time.monotonic()
    templates = publish_templates(bench, posts)
    report.details["templateSeconds"] = round(time.monotonic() - started, 1)
    for platform in PLATFORMS:
        bench.clear_sandbox_requests(platform.lower())
    start = math.ceil(time.time()) + LEAD_SECONDS
    seeded = seed_comments(
        templates, accounts=accounts, posts=posts, plan=plan, start=start, first_due_within=first_due_within
    )
    report.details["seed"] = seeded
    if time.time() >= start:
        report.notes.append(f"seeding took {seeded['seconds']:.0f} s: the first sources were due before it ended")
    groups = ("worker", "postgres", "redis", "beat", "sandbox")
    time.sleep(max(0.0, start - time.time()))
    cpu_before = {name: bench.stack.cpu_seconds(name) for name in groups}
    observed = observe(bench, seconds=seconds, start=start)
    end = time.time()
    cpu = {name: bench.stack.cpu_seconds(name) - cpu_before[name] for name in groups}
    wall = end - start
    counters = budget_counters(bench, accounts=accounts, start=start, end=end)
    answers = rate_limited_answers(bench)

    per_platform: dict[str, Any] = {}
    for k, platform in enumerate(PLATFORMS):
        target = plan[platform]
        mine = [counters[n] for n in range(accounts) if n % len(PLATFORMS) == k and n in counters]
        per_hour = [sum(hours) * 3600 / wall for hours in mine]
        hour_max = max((max(hours) for hours in mine), default=0)
        window_max = max((sum(hours) for hours in mine), default=0)
        allowed = target.allowed_in(wall)
        intervals, lateness = observed.intervals[platform], observed.lateness[platform]
        p95 = percentile(intervals, 95)
        # The budget caps each clock hour (``hour_max``); over the window, the calls of the busiest
        # account are held to the window's share of the budget, in whole reads.
        within_budget = bool(mine) and window_max <= allowed and hour_max <= target.budget and answers[platform] == 0
        within_interval = p95 is not None and p95 <= target.interval_seconds * (1 + INTERVAL_SLACK)
        per_platform[platform] = {
            "accounts": len(mine),
            "budgetPerHour": target.budget,
            "demandPerHour": target.demand,
            "stretch": round(target.stretch, 3),
            "targetIntervalSeconds": round(target.interval_seconds, 1),
            "readsPerAccountHourMax": round(max(per_hour), 1) if per_hour else None,
            "readsPerAccountHourP50": percentile(per_hour, 50),
            "readsInOneClockHourMax": hour_max,
            "readsInWindowMax": window_max,
            "readsAllowedInWindow": allowed,
            "readsSeen": observed.reads[platform],
            "intervalP50Seconds": percentile(intervals, 50),
            "intervalP95Seconds": p95,
            "latenessP50Seconds": percentile(lateness, 50),
            "latenessP95Seconds": percentile(lateness, 95),
            "backlogMax": observed.backlog[platform],
            "lagMaxSeconds": round(observed.lag[platform], 1),
            "rateLimitedAnswers": answers[platform],
            "withinBudget": within_budget,
            "withinInterval": within_interval,
        }
        row = per_platform[platform]
        name = platform.lower()
        report.add(f"{name}: budget per account-hour", target.budget, "reads")
        what = "the review feed" if platform == REVIEW_PLATFORM else "a young post"
        report.add(f"{name}: target interval of {what}", round(target.interval_seconds, 1), "s")
        report.add(f"{name}: reads per account-hour max", row["readsPerAccountHourMax"])
        report.add(f"{name}: reads in the window max", window_max, at_most=allowed)
        report.add(f"{name}: reads per account-hour p50", row["readsPerAccountHourP50"])
        report.add(f"{name}: interval p50", row["intervalP50Seconds"], "s")
        report.add(
            f"{name}: interval p95",
            p95,
            "s",
            at_most=round(target.interval_seconds * (1 + INTERVAL_SLACK), 1),
        )
        report.add(f"{name}: largest due backlog", row["backlogMax"], "sources")
        report.add(f"{name}: largest lag behind due", row["lagMaxSeconds"], "s")
        report.add(f"{name}: rate-limit answers", answers[platform], at_most=0)
        report.add(f"{name}: within budget", "yes" if within_budget else "no").met = within_budget
        report.add(f"{name}: within interval", "yes" if within_interval else "no").met = within_interval
    for name in groups:
        report.add(f"{name} CPU / wall", cpu[name] / wall if wall > 0 else None, "cores")
    report.add("CPU of these processes / wall (2 cores = 2.0)", sum(cpu.values()) / wall if wall > 0 else None)
    report.details.update(
        {
            "platforms": per_platform,
            "observedSeconds": round(wall, 1),
            "samples": observed.samples,
            "cpuSecondsByProcess": {k: round(v, 2) for k, v in cpu.items()},
            "startedAt": dt.datetime.fromtimestamp(start, dt.UTC).isoformat(),
        }
    )
    report.notes.append(
        f"{accounts} accounts × {posts} young posts over {', '.join(ENTRY_PLATFORMS)}, and review feeds; reads per account-hour are the "
        f"budget counters over {wall:.0f} s, scaled to an hour; an interval is between two finished reads of one "
        "source (the first from the read the seed stands for)"
    )
    report.notes.append(
        f"{REVIEW_PLATFORM} accounts read their review feed (one source each, hourly), not their posts; "
        "TikTok reads no comments, Pinterest and Telegram have no comment API"
    )
    return report
