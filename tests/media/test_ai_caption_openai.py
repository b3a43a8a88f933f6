"""The OpenAI-compatible caption provider against a local fake chat completions API over real
HTTP: the request it sends, retries with backoff on 429 and 5xx, the error mapping, and that
its key never reaches an answer or a log line."""

from __future__ import annotations

import logging

import pytest

from media.ai.openai_captions import OpenAICompatibleCaptionProvider
from media.ai.providers import CaptionTarget, ProviderError, get_caption_provider
from media.models import AiUsage

pytestmark = pytest.mark.django_db

GENERATE = "/api/v1/ai/captions"
REFINE = "/api/v1/ai/captions/refine"
KEY = "sk-caption-secret-0123456789"


@pytest.fixture
def chat(settings, fake_chat_api):
    settings.AI_CAPTION_PROVIDER = "openai"
    settings.AI_CAPTION_API_URL = fake_chat_api.url
    settings.AI_CAPTION_API_KEY = KEY
    settings.AI_CAPTION_MODEL = "gpt-4o-mini"
    settings.AI_CAPTION_RETRY_BACKOFF_SECONDS = 0.0
    return fake_chat_api


def provider_for(api, *, waits: list[float], timeout: float = 30.0) -> OpenAICompatibleCaptionProvider:
    return OpenAICompatibleCaptionProvider(
        base_url=api.url, api_key=KEY, model="m", timeout=timeout, backoff=0.5, sleep=waits.append
    )


def test_settings_choose_the_provider(settings, chat):
    provider = get_caption_provider()
    assert isinstance(provider, OpenAICompatibleCaptionProvider)
    assert (provider.base_url, provider.api_key, provider.model) == (chat.url, KEY, "gpt-4o-mini")
    settings.AI_CAPTION_PROVIDER = "nonsense"
    with pytest.raises(ProviderError, match="'nonsense' is not configured"):
        get_caption_provider()


def test_generate_sends_a_chat_completion_and_fits_the_answer(api, chat):
    chat.caption('"' + "Spring is here " * 30 + '"')
    response = api.post(GENERATE, {"prompt": "spring sale", "platform": "TWITTER"}, format="json")
    assert response.status_code == 201
    assert response.json() == {"caption": ("Spring is here " * 18 + "Spring is").strip()}
    [sent] = chat.requests
    assert sent["path"] == "/v1/chat/completions"
    assert sent["headers"]["Authorization"] == f"Bearer {KEY}"
    assert sent["json"]["model"] == "gpt-4o-mini"
    system, user = sent["json"]["messages"]
    assert system["role"] == "system" and user["role"] == "user"
    assert "spring sale" in user["content"] and "TWITTER" in user["content"] and "280" in user["content"]


def test_refine_sends_the_instruction_and_texts_and_keeps_the_partial_text(api, chat):
    chat.caption("launched the tracker today.")
    body = {"prompt": "more upbeat", "originalText": "We launched a tracker.", "partialText": "Big news: we"}
    response = api.post(REFINE, body, format="json")
    assert response.status_code == 201
    assert response.json() == {"caption": "Big news: we launched the tracker today."}
    content = chat.requests[0]["json"]["messages"][1]["content"]
    assert "more upbeat" in content and "We launched a tracker." in content and "Big news: we" in content


def test_an_answer_that_already_begins_with_the_partial_text_is_kept(api, chat):
    chat.caption("Big news: we shipped!")
    body = {"prompt": "p", "originalText": "t", "partialText": "Big news: we"}
    assert api.post(REFINE, body, format="json").json() == {"caption": "Big news: we shipped!"}


def test_429_is_retried_after_the_retry_after_it_names(chat):
    chat.reply(429, {"error": {"message": "Rate limit reached"}}, {"Retry-After": "2"})
    chat.caption("ok")
    waits: list[float] = []
    caption = provider_for(chat, waits=waits).generate(prompt="p", target=CaptionTarget())
    assert caption.text == "ok"
    assert waits == [2.0] and len(chat.requests) == 2


def test_5xx_is_retried_with_a_doubling_backoff(chat):
    chat.reply(503, {"error": {"message": "overloaded"}})
    chat.reply(502, b"<html>bad gateway</html>")
    chat.caption("third time lucky")
    waits: list[float] = []
    caption = provider_for(chat, waits=waits).generate(prompt="p", target=CaptionTarget())
    assert caption.text == "third time lucky"
    assert waits == [0.5, 1.0] and len(chat.requests) == 3


def test_a_long_retry_after_falls_back_to_the_backoff(chat):
    chat.reply(429, {"error": "slow down"}, {"Retry-After": "3600"})
    chat.caption("ok")
    waits: list[float] = []
    provider_for(chat, waits=waits).generate(prompt="p", target=CaptionTarget())
    assert waits == [0.5]


def test_retries_stop_after_three_attempts(chat):
    chat.reply(500, {"error": {"message": "boom"}})
    waits: list[float] = []
    with pytest.raises(ProviderError) as raised:
        provider_for(chat, waits=waits).generate(prompt="p", target=CaptionTarget())
    assert raised.value.message == "AI caption provider failed (500): boom"
    assert raised.value.retryable
    assert waits == [0.5, 1.0] and len(chat.requests) == 3


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (
            401,
            {"error": {"message": f"Incorrect API key provided: {KEY}"}},
            "AI caption provider refused the credentials",
        ),
        (403, {"error": "forbidden"}, "AI caption provider refused the credentials"),
        (
            400,
            {"error": {"message": f"model not found for key {KEY}"}},
            "AI caption provider rejected the request: model not found for key ***",
        ),
        (404, b"not json", "AI caption provider rejected the request: HTTP 404"),
    ],
)
def test_client_errors_are_not_retried_and_never_carry_the_key(chat, status, body, message):
    chat.reply(status, body)
    waits: list[float] = []
    with pytest.raises(ProviderError) as raised:
        provider_for(chat, waits=waits).generate(prompt="p", target=CaptionTarget())
    assert raised.value.message == message and not raised.value.retryable
    assert waits == [] and len(chat.requests) == 1


def test_a_key_in_a_long_message_is_hidden_before_it_is_shortened(chat):
    chat.reply(400, {"error": {"message": "x" * 290 + KEY}})
    with pytest.raises(ProviderError) as raised:
        provider_for(chat, waits=[]).generate(prompt="p", target=CaptionTarget())
    assert KEY[:6] not in raised.value.message


@pytest.mark.parametrize(
    "body",
    [{"choices": []}, {"choices": [{"message": {"content": "  "}}]}, {"choices": [{"message": {"content": 5}}]}, b"{"],
)
def test_an_answer_without_a_caption_is_an_error(chat, body):
    chat.reply(200, body)
    with pytest.raises(ProviderError, match="returned no caption"):
        provider_for(chat, waits=[]).generate(prompt="p", target=CaptionTarget())


def test_a_provider_that_never_answers_times_out_and_is_retried(chat):
    chat.hang = True
    waits: list[float] = []
    with pytest.raises(ProviderError) as raised:
        provider_for(chat, waits=waits, timeout=0.2).generate(prompt="p", target=CaptionTarget())
    assert raised.value.message == "AI caption provider timed out"
    assert len(waits) == 2


def test_an_unreachable_provider_is_an_error(refused_port):
    port = refused_port
    with pytest.raises(ProviderError) as raised:
        OpenAICompatibleCaptionProvider(
            base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY, model="m", sleep=lambda _: None
        ).generate(prompt="p", target=CaptionTarget())
    assert raised.value.message == "AI caption provider is unreachable"


def test_an_unconfigured_provider_is_an_error():
    with pytest.raises(ProviderError, match="AI_CAPTION_API_URL is empty"):
        OpenAICompatibleCaptionProvider(base_url="", api_key="", model="").generate(prompt="p", target=CaptionTarget())


@pytest.mark.parametrize(
    ("path", "body"), [(GENERATE, {"prompt": "p"}), (REFINE, {"prompt": "p", "originalText": "t"})]
)
def test_a_provider_failure_is_502_refunded_and_keyless_in_logs(api, chat, caplog, path, body):
    caplog.set_level(logging.DEBUG)
    chat.reply(503, {"error": {"message": f"upstream down (key {KEY})"}})
    response = api.post(path, body, format="json")
    assert response.status_code == 502
    assert response.json() == {
        "statusCode": 502,
        "error": "Bad Gateway",
        "message": "AI caption provider failed (503): upstream down (key ***)",
        "code": "ai_provider_error",
    }
    assert len(chat.requests) == 3
    assert list(AiUsage.objects.values_list("calls", "units")) == [(0, 0)]
    logged = caplog.text + "".join(repr(r.__dict__) for r in caplog.records)
    assert KEY not in logged and KEY not in response.content.decode()


def test_a_caption_that_cannot_fit_without_cutting_a_word_is_502_and_refunded(api, chat):
    chat.caption("x" * 400)
    response = api.post(GENERATE, {"prompt": "p", "platform": "BLUESKY"}, format="json")
    assert response.status_code == 502
    assert response.json()["message"] == (
        "AI caption provider returned no caption that fits BLUESKY's text limit without cutting a word"
    )
    assert list(AiUsage.objects.values_list("calls", "units")) == [(0, 0)]
