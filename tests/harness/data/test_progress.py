from harness.data import prepare


def test_slow_steps_show_progress_bars_on_stderr(txt_config, capfd, monkeypatch):
    monkeypatch.setattr("harness.data.progress.DELAY_S", 0.0)  # every step counts as slow
    prepare(txt_config, 512)
    out, err = capfd.readouterr()
    assert out == ""
    assert "training tokenizer" in err and "encoding corpus" in err
