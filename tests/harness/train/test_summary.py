"""The run summary names each attention kernel once (it printed 'sdpa,' once per layer)."""

from harness.train.summary import attention_kernels


def test_attention_kernels_name_each_kernel_once():
    assert attention_kernels(["sdpa"] * 12) == "sdpa"
    assert attention_kernels(["eager", "sdpa", "eager"]) == "eager×2, sdpa×1"
