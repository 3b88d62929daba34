"""CS336's contract, set up as CS336 sets it up (graded only by grading-cs336.yaml)."""
