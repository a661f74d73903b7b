"""One dream, stage by stage: the material it reads, the facts it extracts, the stages that run them."""
