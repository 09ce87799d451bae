class A:
    v = 1

class B:
    v = 2

class C:
    v = 0
