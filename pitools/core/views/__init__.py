"""Read models for the renderers: inspect, stats, branches, listing."""
