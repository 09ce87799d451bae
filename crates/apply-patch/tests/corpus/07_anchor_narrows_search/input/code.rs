fn first() {
    let x = 1;
}

fn second() {
    let x = 1;
}
