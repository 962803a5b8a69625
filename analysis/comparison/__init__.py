"""Each arm against its baseline: the statistics, the one outcome model, and the tables and headlines built on it.

    stats             t-intervals, paired t-tests, Holm's adjustment, seeds needed (scipy.stats)
    pairs             an arm against its baseline on matched seeds: divergences and loss
    rules             the one outcome model: condition → verdict → sentence, the `Verdict` enum
    verdicts          the fixed-n verdicts from a table's pairs, by the rules
    row               `ComparisonRow`: one typed row of the table
    table             the comparison table: one `ComparisonRow` per (arm, lr)
    sequential        e-processes and confidence sequences (anytime-valid)
    sequential_table  the anytime-valid table (`--sequential`, `--until-decided`)
    sweep             `compare`: a sweep's table straight from the store
    headline          each arm at its best LR against the baseline at its best LR
    bimodal           per-seed outcomes that split into two groups

No pandas here, and no store access but `sweep` (`analysis.reading` reads the cells); this file imports nothing.
"""
