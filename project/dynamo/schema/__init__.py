"""The tables the models declare: the registry of models, their drift from the live tables,
creating and checking them, and their protection on AWS."""
