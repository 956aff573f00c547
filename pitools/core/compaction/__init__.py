"""Pi's prepareCompaction, the summarization prompts, settings and the compaction plan."""
