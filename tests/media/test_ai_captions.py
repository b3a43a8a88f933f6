"""POST /ai/captions and /ai/captions/refine with the offline provider (the default): bodies,
platform limits, validation, roles, idempotency, and that nothing but usage is written."""

from __future__ import annotations

import pytest

from media.ai.interface import CaptionTarget
from media.ai.offline_captions import OfflineCaptionWriter
from media.models import AiUsage
from platforms.base import Platform
from platforms.capabilities import CAPABILITIES, text_length
from posts.models import Post
from tests.factories import WorkspaceFactory

pytestmark = pytest.mark.django_db

GENERATE = "/api/v1/ai/captions"
REFINE = "/api/v1/ai/captions/refine"
CAPTION_PLATFORMS = [
    "TWITTER",
    "BLUESKY",
    "MASTODON",
    "THREADS",
    "PINTEREST",
    "INSTAGRAM",
    "TIKTOK",
    "LINKEDIN",
    "YOUTUBE",
    "FACEBOOK",
]
# Words whose counting differs per platform: a URL (23 on X), emoji (2 on X, one grapheme on
# Bluesky, up to 25 UTF-8 bytes), CJK (2 on X), a combining accent (two code points, one grapheme).
MIXED_WORDS = [
    "launch",
    "https://example.com/spring-sale?ref=crosspost&utm_source=ai",
    "🏔️",
    "boots",
    "日本語",
    "👩‍👩‍👧‍👦",
    "cafe\u0301",
    "trail",
]


def mixed_text(characters: int) -> str:
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < characters:
        words.append(MIXED_WORDS[len(words) % len(MIXED_WORDS)])
    return " ".join(words)[:characters].rsplit(" ", 1)[0]


def fits(platform: str, text: str) -> bool:
    caps = CAPABILITIES[Platform(platform)]
    within_bytes = caps.text_byte_limit is None or len(text.encode()) <= caps.text_byte_limit
    return text_length(Platform(platform), text) <= caps.text_limit and within_bytes


def assert_cut_at_a_word_end(platform: str, caption: str, full: str) -> None:
    """``caption`` is ``full`` cut where a word ends, as long as the platform allows: it fits, and
    one more word would not."""
    assert caption and fits(platform, caption)
    assert full.startswith(caption)
    if caption == full:
        return
    assert full[len(caption)].isspace(), "the caption ends inside a word"
    rest = full[len(caption) :]
    next_word_end = len(caption) + (len(rest) - len(rest.lstrip())) + len(rest.lstrip().split()[0])
    assert not fits(platform, full[:next_word_end]), "the caption was cut shorter than needed"


def test_generate_answers_201_with_the_caption(api):
    response = api.post(GENERATE, {"prompt": "a lighthouse at dusk"}, format="json")
    assert response.status_code == 201
    assert response.json() == {"caption": "A lighthouse at dusk. Tell us what you think!\n\n#lighthouse #dusk"}
    assert response["RateLimit-Limit"]


def test_refine_answers_201_with_the_reworked_caption(api):
    body = {
        "prompt": "shorter, and end with a question",
        "originalText": "We just shipped dark mode. It took months of work and we love it.",
        "platform": "BLUESKY",
    }
    response = api.post(REFINE, body, format="json")
    assert response.status_code == 201
    assert response.json() == {"caption": "We just shipped dark mode. What do you think?"}


def test_refine_continues_the_partial_text(api):
    body = {
        "prompt": "add hashtags",
        "originalText": "We launched the lighthouse tracker today",
        "partialText": "Big news: we",
    }
    response = api.post(REFINE, body, format="json")
    assert response.status_code == 201
    assert response.json() == {"caption": "Big news: we launched the lighthouse tracker today #launched #lighthouse"}


def test_refine_never_repeats_what_the_partial_text_already_says(api):
    body = {
        "prompt": "shorter",
        "originalText": "Our spring sale. Starts Friday, with 20% off everything!",
        "partialText": "Our spring sale starts",
    }
    response = api.post(REFINE, body, format="json")
    assert response.status_code == 201
    assert response.json() == {"caption": "Our spring sale starts"}


@pytest.mark.parametrize(
    ("platform", "expected"),
    [
        (
            "INSTAGRAM",
            "It's here: our spring sale, 20% off hiking boots and tents. Double-tap if you agree!"
            "\n\n#spring #sale #hiking #boots #tents",
        ),
        (
            "LINKEDIN",
            "It's here: our spring sale, 20% off hiking boots and tents. We'd love to hear your thoughts in the "
            "comments.\n\n#spring #hiking #boots",
        ),
        (
            "FACEBOOK",
            "It's here: our spring sale, 20% off hiking boots and tents. What do you think? Let us know in the comments.",
        ),
        ("BLUESKY", "It's here: our spring sale, 20% off hiking boots and tents. Tell us what you think!\n\n#spring"),
    ],
)
def test_generate_writes_a_caption_about_the_prompt_not_the_prompt_itself(api, platform, expected):
    prompt = "Write a short caption announcing our spring sale, 20% off hiking boots and tents"
    response = api.post(GENERATE, {"prompt": prompt, "platform": platform}, format="json")
    assert response.status_code == 201
    assert response.json() == {"caption": expected}


def test_nothing_is_saved_or_posted_but_usage(api, workspace):
    api.post(GENERATE, {"prompt": "a lighthouse", "platform": "MASTODON"}, format="json")
    api.post(REFINE, {"prompt": "shorter", "originalText": "One. Two."}, format="json")
    assert Post.objects.count() == 0
    assert list(AiUsage.objects.values_list("workspace_id", "kind", "calls", "units")) == [
        (workspace.id, "caption", 2, 4)
    ]


@pytest.mark.parametrize("platform", CAPTION_PLATFORMS)
def test_generate_fits_every_platform_limit_without_cutting_a_word(api, platform):
    prompt = mixed_text(2000)
    # What the provider writes for this platform (its habits: hashtags, closers), before fitting.
    full = OfflineCaptionWriter().generate(prompt=prompt, target=CaptionTarget(platform=platform)).text
    response = api.post(GENERATE, {"prompt": prompt, "platform": platform}, format="json")
    assert response.status_code == 201
    assert_cut_at_a_word_end(platform, response.json()["caption"], full)


@pytest.mark.parametrize("platform", CAPTION_PLATFORMS)
def test_refine_fits_every_platform_limit_without_cutting_a_word(api, platform):
    body = {"prompt": "more playful", "originalText": mixed_text(10000), "partialText": mixed_text(300)}
    full = api.post(REFINE, body, format="json").json()["caption"]
    assert full.startswith(body["partialText"])
    response = api.post(REFINE, {**body, "platform": platform}, format="json")
    assert response.status_code == 201
    assert_cut_at_a_word_end(platform, response.json()["caption"], full)


def test_x_counts_a_url_as_23_whatever_its_length(api):
    url = "https://example.com/" + "a" * 200
    caption = api.post(GENERATE, {"prompt": f"read {url} now", "platform": "TWITTER"}, format="json").json()
    assert url in caption["caption"]


@pytest.mark.parametrize("platform", ["TELEGRAM", "GOOGLE_BUSINESS", "twitter", "X", ""])
@pytest.mark.parametrize("path", [GENERATE, REFINE])
def test_a_platform_outside_the_list_is_400(api, path, platform):
    response = api.post(path, {"prompt": "p", "originalText": "t", "platform": platform}, format="json")
    assert response.status_code == 400
    assert response.json() == {
        "statusCode": 400,
        "error": "Bad Request",
        "message": [f'platform: "{platform}" is not a valid choice.'],
        "code": "validation_error",
    }
    assert AiUsage.objects.count() == 0


@pytest.mark.parametrize(
    ("body", "messages"),
    [
        ({}, ["prompt: This field is required."]),
        ({"prompt": ""}, ["prompt: This field may not be blank."]),
        ({"prompt": "  \n "}, ["prompt: must not be blank"]),
        ({"prompt": "x" * 2001}, ["prompt: Ensure this field has no more than 2000 characters."]),
        ({"prompt": 42}, ["prompt: must be a string, not a number"]),
        ({"prompt": ["a"]}, ["prompt: must be a string, not an array"]),
        ({"prompt": None}, ["prompt: This field may not be null."]),
    ],
)
def test_generate_validation(api, body, messages):
    response = api.post(GENERATE, body, format="json")
    assert response.status_code == 400
    assert response.json() == {
        "statusCode": 400,
        "error": "Bad Request",
        "message": messages,
        "code": "validation_error",
    }
    assert AiUsage.objects.count() == 0


@pytest.mark.parametrize(
    ("body", "messages"),
    [
        ({}, ["prompt: This field is required.", "originalText: This field is required."]),
        ({"prompt": "x", "originalText": ""}, ["originalText: This field may not be blank."]),
        ({"prompt": "x", "originalText": " "}, ["originalText: must not be blank"]),
        (
            {"prompt": "x", "originalText": "t" * 10001},
            ["originalText: Ensure this field has no more than 10000 characters."],
        ),
        (
            {"prompt": "x", "originalText": "t", "partialText": "p" * 10001},
            ["partialText: Ensure this field has no more than 10000 characters."],
        ),
        ({"prompt": "x" * 2001, "originalText": "t"}, ["prompt: Ensure this field has no more than 2000 characters."]),
        ({"prompt": 42, "originalText": "t"}, ["prompt: must be a string, not a number"]),
        ({"prompt": "x", "originalText": 7}, ["originalText: must be a string, not a number"]),
        ({"prompt": "x", "originalText": "t", "partialText": False}, ["partialText: must be a string, not a boolean"]),
    ],
)
def test_refine_validation(api, body, messages):
    response = api.post(REFINE, body, format="json")
    assert response.status_code == 400
    assert response.json() == {
        "statusCode": 400,
        "error": "Bad Request",
        "message": messages,
        "code": "validation_error",
    }
    assert AiUsage.objects.count() == 0


def test_the_longest_inputs_are_accepted(api):
    assert api.post(GENERATE, {"prompt": "x" * 2000}, format="json").status_code == 201
    body = {"prompt": "x" * 2000, "originalText": "t " * 5000, "partialText": "p " * 5000, "platform": "FACEBOOK"}
    response = api.post(REFINE, body, format="json")
    assert response.status_code == 201
    assert response.json()["caption"].startswith("p p p")


@pytest.mark.parametrize("role", ["admin", "editor", "contributor"])
def test_every_role_with_ai_generate_may_call_both(client_for, role):
    client = client_for(role)
    assert client.post(GENERATE, {"prompt": "hello"}, format="json").status_code == 201
    assert client.post(REFINE, {"prompt": "shorter", "originalText": "Hi."}, format="json").status_code == 201


@pytest.mark.parametrize("path", [GENERATE, REFINE])
def test_viewer_is_403_with_required_permission(client_for, path):
    response = client_for("viewer").post(path, {"prompt": "p", "originalText": "t"}, format="json")
    assert response.status_code == 403
    assert response.json() == {
        "statusCode": 403,
        "error": "Forbidden",
        "message": "This operation requires the ai.generate permission",
        "code": "permission_denied",
        "requiredPermission": "ai.generate",
        "role": "viewer",
        "tokenType": "api_token",
    }
    assert AiUsage.objects.count() == 0


@pytest.mark.parametrize("path", [GENERATE, REFINE])
def test_anonymous_is_401(anon, path):
    response = anon.post(path, {"prompt": "p", "originalText": "t"}, format="json")
    assert response.status_code == 401
    assert response.json()["message"] == "API key is invalid or missing"


@pytest.mark.parametrize("path", [GENERATE, REFINE])
def test_another_workspace_is_403_workspace_access_denied(api, path):
    stranger = WorkspaceFactory()
    response = api.post(
        path, {"prompt": "p", "originalText": "t"}, format="json", headers={"X-Workspace-Id": stranger.id}
    )
    assert response.status_code == 403
    assert response.json()["code"] == "workspace_access_denied"
    assert AiUsage.objects.count() == 0


@pytest.mark.parametrize(
    ("path", "body"), [(GENERATE, {"prompt": "p"}), (REFINE, {"prompt": "p", "originalText": "t"})]
)
def test_idempotency_key_replays_and_charges_once(api, path, body):
    first = api.post(path, body, format="json", headers={"Idempotency-Key": "caption-1"})
    again = api.post(path, body, format="json", headers={"Idempotency-Key": "caption-1"})
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    assert list(AiUsage.objects.values_list("calls", "units")) == [(1, 2)]
