def g(x):
    if x:
        return 1
