"""Korean particles chosen by the last sound of what they follow (pipeline/render/text/korean.py)."""

from __future__ import annotations

import pytest

from pipeline.render.text.korean import final_sound, particle, resolve


@pytest.mark.parametrize(
    ("value", "sound"),
    [
        ("연산", True),  # ㄴ
        ("메모리", False),
        ("마지막 줄", "l"),  # ㄹ
        ("2", False),  # 이
        ("512", False),  # 오백십이
        ("65536", True),  # 육
        ("7", "l"),  # 칠
        ("10", True),  # 십
        ("100", True),  # 백
        ("0", True),  # 영
        ("1.85", False),  # 오
        ("dot_product", False),  # 프로덕트
        ("residual", "l"),  # 레지듀얼
        ("all_gather", False),  # 개더
        ("ring", True),  # 링
        ("HBM", True),  # 엠
        ("GB", False),  # 비
        ("B", False),
        ("L", "l"),  # 엘
        ("llama3_8b_decode_sweep[B=512]", False),
        ("<code>all_gather</code>", False),  # markup after the word is passed over
        ("50%", False),  # 퍼센트
        ("", None),
        ("—", None),
    ],
)
def test_the_last_sound(value, sound):
    assert final_sound(value) == sound


@pytest.mark.parametrize(
    ("value", "pair", "chosen"),
    [
        ("dot_product", "은(는)", "는"),
        ("residual", "은(는)", "은"),
        ("HBM", "이(가)", "이"),
        ("h100", "을(를)", "을"),
        ("tpu-v5e", "과(와)", "와"),
        ("연산", "(으)로", "으로"),
        ("마지막 줄", "(으)로", "로"),  # not 으로 after ㄹ
        ("메모리", "(으)로", "로"),
        ("—", "은(는)", "은(는)"),  # unknown: both forms kept
    ],
)
def test_the_particle(value, pair, chosen):
    assert particle(value, pair) == chosen


def test_resolve_chooses_each_particle_by_what_comes_before_it():
    text = (
        "가장 나쁜 dot_product은(는) 연산 시간의 480배이(가) 걸림; h100_add_65536은(는) HBM을(를)"
    )
    assert (
        resolve(text) == "가장 나쁜 dot_product는 연산 시간의 480배가 걸림; h100_add_65536은 HBM을"
    )
    assert resolve("no particle (here)") == "no particle (here)"
    assert resolve("<b>x</b>은(는) (그)") == "<b>x</b>는 (그)"


@pytest.mark.parametrize(
    ("name", "topic"),
    [
        ("step", "step은"),  # 스텝
        ("resnet", "resnet은"),  # 레스넷
        ("attn_out", "attn_out은"),  # 아웃
        ("mlp_up", "mlp_up은"),  # 업
        ("prefill_chat", "prefill_chat은"),  # 챗
        ("block", "block은"),  # 블록
        ("dot_product", "dot_product는"),  # 프로덕트: a cluster before t
        ("heat", "heat는"),  # 히트: a long vowel before t
        ("mlp_act", "mlp_act는"),  # 액트
        ("decode", "decode는"),
    ],
)
def test_a_latin_words_final_p_t_k_after_a_short_vowel_is_a_final_consonant(name, topic):
    """Found by a review: step, resnet, attn_out, mlp_up and prefill_chat took 는/가."""
    assert resolve(f"{name}은(는)") == topic
