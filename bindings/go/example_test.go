package c10c_test

import (
	"errors"
	"fmt"

	c10c "github.com/c10c/c10c-go"
)

func Example() {
	x, err := c10c.FromFloat32s([]float32{0, 1, 2, 3, 4, 5}, 2, 3)
	if err != nil {
		panic(err)
	}
	defer x.Close()
	t, err := x.Transpose(0, 1)
	if err != nil {
		panic(err)
	}
	defer t.Close()
	fmt.Println(t.Sizes(), t.Strides(), t.DType(), t.Device())

	_, err = x.Select(1, 3)
	var e *c10c.Error
	if errors.As(err, &e) {
		fmt.Println(e.Status.Name())
		fmt.Println(e.Message)
	}
	// Output:
	// [3 2] [1 3] float32 cpu
	// C10C_STATUS_INDEX_OUT_OF_RANGE
	// select(): index 3 out of range for tensor of size [2, 3] at dimension 1
}
