"""Method families: one subpackage per family of methods, behind one release machinery."""
