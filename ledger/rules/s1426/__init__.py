"""RIN generation (§80.1426), in three parts: which batches generate how many RINs
(`generation`), who may generate them for imported fuel (`eligibility`, (c)(4)-(c)(6)), and
delayed RINs and their retirement first (`delayed`, (g))."""
