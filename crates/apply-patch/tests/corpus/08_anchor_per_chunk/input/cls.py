class A:
    v = 0

class B:
    v = 0

class C:
    v = 0
